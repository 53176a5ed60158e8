"""The :class:`Config` object: typed access, interpolation, editing and writing back."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ConversionError, InterpolationError, MissingError
from .values import Value, format_value, parse_duration, parse_value, text_of

_REFERENCE_RE = re.compile(r"\$(?:\$|\{([^{}]*)\})")
_MISSING: Any = object()


@dataclass
class Entry:
    """A value as written in the file (comments stripped) and the line where it starts."""

    text: str
    lineno: int = 0


class Config:
    """Sections of ``key = value`` entries.

    Values are parsed and interpolated on first access and then cached; editing the
    configuration with :meth:`set` or :meth:`remove` drops the cache.
    """

    def __init__(self, sections: dict[str, dict[str, Entry]] | None = None) -> None:
        self._sections: dict[str, dict[str, Entry]] = sections if sections is not None else {}
        self._cache: dict[tuple[str, str], Value] = {}

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, Value]]) -> Config:
        """Build a configuration from ``{section: {key: value}}``."""
        config = cls()
        for section, values in data.items():
            config.add_section(section)
            for key, value in values.items():
                config.set(section, key, value)
        return config

    # -- structure ---------------------------------------------------------------------

    def sections(self) -> list[str]:
        return list(self._sections)

    def keys(self, section: str) -> list[str]:
        return list(self._entries(section))

    def has(self, section: str, key: str | None = None) -> bool:
        if section not in self._sections:
            return False
        return key is None or key.lower() in self._sections[section]

    def __contains__(self, section: object) -> bool:
        return section in self._sections

    def __iter__(self) -> Iterator[str]:
        return iter(self._sections)

    def __getitem__(self, section: str) -> Section:
        self._entries(section)
        return Section(self, section)

    # -- reading -----------------------------------------------------------------------

    def get(self, section: str, key: str, default: Any = _MISSING) -> Value:
        """The typed value of ``key`` in ``section``, or ``default`` when there is none.

        Lists are returned as fresh copies, so changing one never changes the configuration.
        """
        if default is not _MISSING and not self.has(section, key):
            return default
        value = self._resolve(section, key.lower(), ())
        return list(value) if isinstance(value, list) else value

    def get_str(self, section: str, key: str, default: Any = _MISSING) -> str:
        return self._typed(section, key, default, "a string", lambda v: v if isinstance(v, str) else None)

    def get_int(self, section: str, key: str, default: Any = _MISSING) -> int:
        def check(value: Value) -> int | None:
            if isinstance(value, bool) or not isinstance(value, int):
                return None
            return value

        return self._typed(section, key, default, "an integer", check)

    def get_float(self, section: str, key: str, default: Any = _MISSING) -> float:
        def check(value: Value) -> float | None:
            if isinstance(value, bool) or not isinstance(value, int | float):
                return None
            return float(value)

        return self._typed(section, key, default, "a number", check)

    def get_bool(self, section: str, key: str, default: Any = _MISSING) -> bool:
        return self._typed(section, key, default, "a boolean", lambda v: v if isinstance(v, bool) else None)

    def get_list(self, section: str, key: str, default: Any = _MISSING) -> list:
        """A list value; a single scalar is returned as a one-item list."""
        return self._typed(section, key, default, "a list", lambda v: v if isinstance(v, list) else [v])

    def get_duration(self, section: str, key: str, default: Any = _MISSING) -> float:
        """Seconds, from a number of seconds or a text such as ``1h30m`` or ``250ms``."""

        def check(value: Value) -> float | None:
            if isinstance(value, str):
                try:
                    return parse_duration(value)
                except ValueError:
                    return None
            if isinstance(value, bool) or not isinstance(value, int | float):
                return None
            return float(value)

        return self._typed(section, key, default, "a duration", check)

    def to_dict(self) -> dict[str, dict[str, Value]]:
        """Every value, interpolated and typed, as ``{section: {key: value}}``."""
        return {name: {key: self.get(name, key) for key in entries} for name, entries in self._sections.items()}

    # -- editing -----------------------------------------------------------------------

    def add_section(self, section: str) -> None:
        self._sections.setdefault(section, {})

    def set(self, section: str, key: str, value: Value) -> None:
        """Set ``key`` in ``section`` (created if needed) to a Python value."""
        text = format_value(value)
        self.add_section(section)
        self._sections[section][key.lower()] = Entry(text)
        self._cache.clear()

    def remove(self, section: str, key: str | None = None) -> None:
        """Remove one key, or the whole section when ``key`` is not given."""
        entries = self._entries(section)
        if key is None:
            del self._sections[section]
        elif key.lower() in entries:
            del entries[key.lower()]
        else:
            raise MissingError(f"no key {key!r} in section [{section}]")
        self._cache.clear()

    def dumps(self) -> str:
        """The configuration as text that :func:`iniconf.loads` reads back."""
        blocks = []
        for name, entries in self._sections.items():
            lines = [f"[{name}]"]
            for key, entry in entries.items():
                first, *rest = entry.text.split("\n")
                lines.append(f"{key} = {first}".rstrip())
                lines.extend(f"    {line}" for line in rest)
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks) + "\n" if blocks else ""

    # -- internals ---------------------------------------------------------------------

    def _entries(self, section: str) -> dict[str, Entry]:
        try:
            return self._sections[section]
        except KeyError:
            raise MissingError(f"no section [{section}]") from None

    def _typed(self, section: str, key: str, default: Any, what: str, check: Callable[[Value], Any]) -> Any:
        if default is not _MISSING and not self.has(section, key):
            return default
        value = self.get(section, key)
        converted = check(value)
        if converted is None:
            raise ConversionError(f"[{section}] {key} = {value!r} is not {what}")
        return converted

    def _resolve(self, section: str, key: str, chain: tuple[tuple[str, str], ...]) -> Value:
        name = (section, key)
        if name in self._cache:
            return self._cache[name]
        if name in chain:
            loop = " -> ".join(f"{s}:{k}" for s, k in (*chain, name))
            raise InterpolationError(f"circular reference: {loop}")
        entries = self._entries(section)
        if key not in entries:
            raise MissingError(f"no key {key!r} in section [{section}]")
        chain = (*chain, name)

        def interpolate(text: str) -> str:
            return _REFERENCE_RE.sub(lambda match: self._substitute(match, section, chain), text)

        value = parse_value(entries[key].text, interpolate)
        self._cache[name] = value
        return value

    def _substitute(self, match: re.Match[str], section: str, chain: tuple[tuple[str, str], ...]) -> str:
        if match[1] is None:
            return "$"
        target_section, _, target_key = match[1].rpartition(":")
        target = (target_section.strip() or section, target_key.strip().lower())
        where = "{}:{}".format(*chain[-1])
        try:
            return text_of(self._resolve(*target, chain))
        except MissingError:
            raise InterpolationError(f"{where} refers to {match[0]}, which does not exist") from None
        except ValueError as exc:
            raise InterpolationError(f"{where} refers to {match[0]}: {exc}") from None


class Section(Mapping[str, Value]):
    """A read-only view of one section: ``config["server"]["port"]``."""

    def __init__(self, config: Config, name: str) -> None:
        self._config = config
        self.name = name

    def __getitem__(self, key: str) -> Value:
        return self._config.get(self.name, key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._config.has(self.name, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._config.keys(self.name))

    def __len__(self) -> int:
        return len(self._config.keys(self.name))

    def __repr__(self) -> str:
        return f"<Section [{self.name}] {dict(self)!r}>"
