"""Reading configuration text into raw entries (interpolation happens later, on access)."""

from __future__ import annotations

import re
from pathlib import Path

from .config import Config, Entry
from .errors import ParseError
from .values import parse_value, strip_comment

_SECTION_RE = re.compile(r"^\[(?P<name>[^\[\]]*)\]$")
_ENTRY_RE = re.compile(r"^(?P<key>[^=:\s\[][^=:]*?)\s*[=:]\s*(?P<value>.*)$")
_SECTION_NAME_RE = re.compile(r"^[A-Za-z0-9_.\- ]+$")


def loads(text: str, *, source: str = "<string>") -> Config:
    """Parse configuration text.

    Keys are case-insensitive; section names are not. A line indented deeper than its
    key continues that key's value (joined with a newline); a blank line ends it.
    """
    sections: dict[str, dict[str, Entry]] = {}
    section_lines: dict[str, int] = {}
    current: dict[str, Entry] | None = None
    last: Entry | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            last = None
            continue
        if stripped[0] in "#;":
            continue
        if line[0] in " \t":
            if last is None:
                raise ParseError("indented line does not continue a value", lineno, line, source)
            last.text += "\n" + strip_comment(stripped)
            continue
        last = None
        header = _SECTION_RE.match(strip_comment(stripped))
        if header:
            name = header["name"].strip()
            if not _SECTION_NAME_RE.match(name):
                raise ParseError("bad section name", lineno, line, source)
            if name in sections:
                first = section_lines[name]
                raise ParseError(f"duplicate section (first on line {first})", lineno, line, source)
            current = sections[name] = {}
            section_lines[name] = lineno
            continue
        match = _ENTRY_RE.match(stripped)
        if match is None:
            raise ParseError("expected 'key = value' or '[section]'", lineno, line, source)
        if current is None:
            raise ParseError("key outside of any section", lineno, line, source)
        key = match["key"].lower()
        if key in current:
            first = current[key].lineno
            raise ParseError(f"duplicate key (first on line {first})", lineno, line, source)
        last = current[key] = Entry(strip_comment(match["value"]), lineno)
    _check_values(sections, text.splitlines(), source)
    return Config(sections)


def load(path: str | Path) -> Config:
    """Parse the configuration file at ``path`` (UTF-8)."""
    path = Path(path)
    return loads(path.read_text(encoding="utf-8"), source=str(path))


def _check_values(sections: dict[str, dict[str, Entry]], lines: list[str], source: str) -> None:
    """Report malformed values at load time, with their line, rather than on first access."""
    for entries in sections.values():
        for entry in entries.values():
            try:
                parse_value(entry.text)
            except ValueError as exc:
                raise ParseError(str(exc), entry.lineno, lines[entry.lineno - 1], source) from None
