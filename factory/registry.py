"""One way to register a pluggable kind: a `Registry` of entries by kind.

    FRAMEWORKS = Registry[type[TestFramework]]("test framework")
    FRAMEWORKS.add("pytest", PytestFramework)
    FRAMEWORKS.get("jest")   # UsageError: unknown test framework 'jest'; valid: command, pytest

A new backend is its module and one `add`; the core looks kinds up here and never imports a
concrete backend. An unknown kind's error lists the valid ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

from factory.errors import UsageError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, what: str):
        self.what = what
        """What an entry is, for errors: 'test framework', 'result reader', ..."""
        self._entries: dict[str, T] = {}

    def add(self, kind: str, entry: T) -> T:
        """Register `entry` as `kind` (again: it replaces the old one)."""
        self._entries[kind] = entry
        return entry

    def get(self, kind: str) -> T:
        try:
            return self._entries[kind]
        except KeyError:
            raise UsageError(f"unknown {self.what} {kind!r}; valid: {', '.join(sorted(self._entries))}") from None

    def kinds(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, kind: object) -> bool:
        return kind in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def items(self) -> list[tuple[str, T]]:
        return list(self._entries.items())
