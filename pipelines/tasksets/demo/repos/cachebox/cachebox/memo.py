"""Memoizing functions through a :class:`~cachebox.cache.Cache`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any

from .cache import Cache

_MISSING: Any = object()
_KEYWORDS = ("<keywords>",)


class _Namespace:
    """Tags one memoized function's entries; hashed by identity, so that two functions
    sharing a cache never share entries, even when they have the same name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<memoized {self.name}>"


def make_key(args: tuple, kwargs: dict[str, Any], *, typed: bool = False) -> Hashable:
    """The cache key of one call.

    Keyword arguments are ordered by name, so ``f(a=1, b=2)`` and ``f(b=2, a=1)`` share
    an entry (``f(1, b=2)`` and ``f(a=1, b=2)`` do not: the function sees different
    calls). With ``typed``, arguments that compare equal but differ in type, such as
    ``1`` and ``1.0``, get entries of their own.
    """
    key: tuple = args
    if kwargs:
        key += (_KEYWORDS, *sorted(kwargs.items()))
    if typed:
        key += tuple(type(value) for value in args)
        key += tuple(type(value) for _, value in sorted(kwargs.items()))
    return key


def memoize(
    cache: Cache | Callable | None = None,
    *,
    maxsize: int = 128,
    ttl: float | None = None,
    typed: bool = False,
    key: Callable[..., Hashable] | None = None,
) -> Any:
    """Cache a function's results.

    Use as ``@memoize``, ``@memoize(maxsize=..., ttl=...)`` or ``@memoize(shared_cache)``.
    Results are cached even when they are ``None``; a call that raises caches nothing.
    Several functions may share one cache: each function's keys are kept apart. The
    wrapper exposes ``cache``, ``cache_clear()`` and ``cache_stats()``.
    """
    if callable(cache) and not isinstance(cache, Cache):
        return memoize()(cache)

    def decorate(func: Callable) -> Callable:
        store = cache if cache is not None else Cache(maxsize, ttl)
        name = getattr(func, "__qualname__", type(func).__qualname__)
        namespace = _Namespace(f"{func.__module__}.{name}")

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            call_key = key(*args, **kwargs) if key is not None else make_key(args, kwargs, typed=typed)
            entry_key = (namespace, call_key)
            value = store.get(entry_key, _MISSING)
            if value is _MISSING:
                value = func(*args, **kwargs)
                store.set(entry_key, value)
            return value

        wrapper.cache = store  # type: ignore[attr-defined]
        wrapper.cache_clear = store.clear  # type: ignore[attr-defined]
        wrapper.cache_stats = store.stats  # type: ignore[attr-defined]
        return wrapper

    return decorate
