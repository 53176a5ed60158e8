"""One way to register a pluggable kind: a `Registry` of entries by kind.

    FRAMEWORKS = Registry[type[TestFramework]]("test framework")
    FRAMEWORKS.add("pytest", PytestFramework)
    FRAMEWORKS.get("jest")   # UsageError: unknown test framework 'jest'; valid: command, pytest

A new backend is its module and one `add`; the core looks kinds up here and never imports a
concrete backend. An unknown kind's error lists the valid ones, in one wording for every kind:
`get` raises it as a `UsageError`, `check` as a pydantic error (for a config field naming a
kind), and `union` makes the discriminated union of the kinds' config classes (on `kind`).

Entries keep the order they were first added in (iteration, `items`): where the order means
something (the filter chain) it is the registry's own. Errors list the kinds sorted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Annotated, Any, Generic, TypeVar, Union

from pydantic import BaseModel, Field
from pydantic_core import PydanticCustomError

from factory.errors import UsageError

T = TypeVar("T")

UNKNOWN_KIND = "unknown_kind"
"""The pydantic error type of `check`: a config field names a kind no one registered."""


class Registry(Generic[T]):
    def __init__(self, what: str):
        self.what = what
        """What an entry is, for errors: 'test framework', 'result reader', ..."""
        self._entries: dict[str, T] = {}

    def add(self, kind: str, entry: T) -> T:
        """Register `entry` as `kind` (again: it replaces the old one, in the old one's place)."""
        self._entries[kind] = entry
        return entry

    def get(self, kind: str) -> T:
        try:
            return self._entries[kind]
        except KeyError:
            raise UsageError(self.unknown(kind)) from None

    def unknown(self, kind: object) -> str:
        """The error for a kind no one registered: it lists the valid ones."""
        return f"unknown {self.what} {kind!r}; valid: {', '.join(self.kinds())}"

    def check(self, kind: str) -> str:
        """`kind`, when registered; else a pydantic error with `get`'s message, so a config field
        that names a kind (`Annotated[str, AfterValidator(REGISTRY.check)]`) is refused where it
        stands, with file, line and the valid kinds."""
        if kind not in self._entries:
            # the message as context, not as the template: a kind may hold braces
            raise PydanticCustomError(UNKNOWN_KIND, "{message}", {"message": self.unknown(kind)})
        return kind

    def union(self, config: Callable[[T], type[BaseModel]], discriminator: str = "kind") -> Any:
        """The union of every registered kind's config class (`config(entry)`), discriminated
        by the field `discriminator`, which each class declares as `Literal[its kind]`."""
        classes = tuple(dict.fromkeys(config(entry) for entry in self._entries.values()))
        if not classes:
            raise UsageError(f"no {self.what} is registered")
        if len(classes) == 1:  # pydantic wants two or more members to discriminate
            return classes[0]
        return Annotated[Union[classes], Field(discriminator=discriminator)]  # noqa: UP007

    def copy(self) -> Registry[T]:
        """A registry with the same entries, for a test that adds kinds of its own."""
        other: Registry[T] = Registry(self.what)
        other._entries = dict(self._entries)
        return other

    def kinds(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, kind: object) -> bool:
        return kind in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> list[tuple[str, T]]:
        return list(self._entries.items())

    def values(self) -> list[T]:
        return list(self._entries.values())
