"""An in-memory LRU cache whose entries may expire, with hit/miss statistics."""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any

_MISSING: Any = object()

CAPACITY = "capacity"
EXPIRED = "expired"

EvictCallback = Callable[[Hashable, Any, str], None]
"""Called as ``on_evict(key, value, reason)`` with reason ``"capacity"`` or ``"expired"``."""


@dataclass
class CacheStats:
    """Counters since the cache was made (or since :meth:`Cache.reset_stats`)."""

    hits: int = 0
    misses: int = 0
    evictions: int = 0
    expirations: int = 0

    @property
    def lookups(self) -> int:
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float:
        """Hits per lookup, 0.0 before the first lookup."""
        return self.hits / self.lookups if self.lookups else 0.0

    def __add__(self, other: CacheStats) -> CacheStats:
        return CacheStats(
            self.hits + other.hits,
            self.misses + other.misses,
            self.evictions + other.evictions,
            self.expirations + other.expirations,
        )


@dataclass
class _Entry:
    value: Any
    expires_at: float | None


class ManualClock:
    """A clock that only moves when told to; pass it as ``Cache(clock=...)`` in tests."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock cannot go backwards")
        self.now += seconds


class Cache:
    """A mapping of at most ``maxsize`` entries that drops the least recently used first.

    ``ttl`` (seconds) is the default lifetime of an entry, ``None`` for no expiry; an
    entry is gone once ``ttl`` seconds have passed since it was set. Reads with
    :meth:`get` and ``cache[key]`` count as hits or misses and mark the entry as
    recently used; :meth:`peek`, ``in`` and iteration do neither.
    """

    def __init__(
        self,
        maxsize: int = 128,
        ttl: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_evict: EvictCallback | None = None,
    ) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        _check_ttl(ttl)
        self.maxsize = maxsize
        self.ttl = ttl
        self._clock = clock
        self._on_evict = on_evict
        self._data: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._stats = CacheStats()

    # -- reading -----------------------------------------------------------------------

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The value for ``key`` (a hit), or ``default`` (a miss)."""
        entry = self._live_entry(key, touch=True)
        if entry is None:
            self._stats.misses += 1
            return default
        self._stats.hits += 1
        return entry.value

    def __getitem__(self, key: Hashable) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def peek(self, key: Hashable, default: Any = None) -> Any:
        """The value for ``key`` without counting a lookup or refreshing its recency."""
        entry = self._live_entry(key)
        return default if entry is None else entry.value

    def __contains__(self, key: Hashable) -> bool:
        return self._live_entry(key) is not None

    def ttl_remaining(self, key: Hashable) -> float | None:
        """Seconds until ``key`` expires, ``None`` if it never does; ``KeyError`` if absent."""
        entry = self._live_entry(key)
        if entry is None:
            raise KeyError(key)
        if entry.expires_at is None:
            return None
        return entry.expires_at - self._clock()

    def keys(self) -> list[Hashable]:
        """Live keys, least recently used first."""
        self.expire()
        return list(self._data)

    def items(self) -> list[tuple[Hashable, Any]]:
        self.expire()
        return [(key, entry.value) for key, entry in self._data.items()]

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self.keys())

    def __len__(self) -> int:
        self.expire()
        return len(self._data)

    # -- writing -----------------------------------------------------------------------

    def set(self, key: Hashable, value: Any, *, ttl: float | None = _MISSING) -> None:
        """Store ``value``; ``ttl`` overrides the cache's default for this entry."""
        if ttl is _MISSING:
            ttl = self.ttl
        _check_ttl(ttl)
        expires_at = None if ttl is None else self._clock() + ttl
        self._data.pop(key, None)
        self._data[key] = _Entry(value, expires_at)
        self._shrink()

    def __setitem__(self, key: Hashable, value: Any) -> None:
        self.set(key, value)

    def get_or_set(self, key: Hashable, factory: Callable[[], Any], *, ttl: float | None = _MISSING) -> Any:
        """The cached value for ``key``, or ``factory()`` stored and returned on a miss."""
        value = self.get(key, _MISSING)
        if value is _MISSING:
            value = factory()
            self.set(key, value, ttl=ttl)
        return value

    def pop(self, key: Hashable, default: Any = _MISSING) -> Any:
        """Remove ``key`` and return its value (or ``default``; ``KeyError`` without one)."""
        entry = self._live_entry(key)
        if entry is None:
            if default is _MISSING:
                raise KeyError(key)
            return default
        del self._data[key]
        return entry.value

    def __delitem__(self, key: Hashable) -> None:
        self.pop(key)

    def clear(self) -> None:
        """Drop every entry; statistics are kept."""
        self._data.clear()

    def resize(self, maxsize: int) -> None:
        """Change the capacity, evicting least recently used entries if it shrinks."""
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self.maxsize = maxsize
        self._shrink()

    def expire(self) -> int:
        """Drop every expired entry now and return how many there were."""
        now = self._clock()
        expired = [key for key, entry in self._data.items() if _is_expired(entry, now)]
        for key in expired:
            self._drop_expired(key)
        return len(expired)

    # -- statistics --------------------------------------------------------------------

    def stats(self) -> CacheStats:
        """A snapshot of the counters; it does not change as the cache is used."""
        return dataclasses.replace(self._stats)

    def reset_stats(self) -> None:
        self._stats = CacheStats()

    # -- internals ---------------------------------------------------------------------

    def _live_entry(self, key: Hashable, *, touch: bool = False) -> _Entry | None:
        """The entry for ``key`` unless it is absent or expired; ``touch`` marks it as used."""
        entry = self._data.get(key)
        if entry is None:
            return None
        if _is_expired(entry, self._clock()):
            self._drop_expired(key)
            return None
        if touch:
            self._data.move_to_end(key)
        return entry

    def _drop_expired(self, key: Hashable) -> None:
        entry = self._data.pop(key)
        self._stats.expirations += 1
        if self._on_evict is not None:
            self._on_evict(key, entry.value, EXPIRED)

    def _shrink(self) -> None:
        if len(self._data) <= self.maxsize:
            return
        # Expired entries go first, so that a live entry is never evicted to make room
        # that an expired one could have given.
        self.expire()
        while len(self._data) > self.maxsize:
            key, entry = self._data.popitem(last=False)
            self._stats.evictions += 1
            if self._on_evict is not None:
                self._on_evict(key, entry.value, CAPACITY)

    def __repr__(self) -> str:
        return f"Cache(maxsize={self.maxsize}, ttl={self.ttl}, entries={len(self._data)})"


def _is_expired(entry: _Entry, now: float) -> bool:
    return entry.expires_at is not None and now >= entry.expires_at


def _check_ttl(ttl: float | None) -> None:
    if ttl is not None and ttl <= 0:
        raise ValueError(f"ttl must be positive (or None for no expiry), got {ttl}")
