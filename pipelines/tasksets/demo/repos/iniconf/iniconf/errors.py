"""The exceptions iniconf raises, all under :class:`ConfigError`::

    ConfigError
     ├── ParseError           the text is not valid (has .lineno and .line)
     ├── MissingError         no such section or key (also a KeyError)
     ├── InterpolationError   a ${...} reference is unknown or circular
     └── ConversionError      a value is not of the requested type (also a ValueError)
"""

from __future__ import annotations


class ConfigError(Exception):
    """Base class of every error raised by iniconf."""


class ParseError(ConfigError):
    """The configuration text is malformed; ``lineno`` counts from 1."""

    def __init__(self, message: str, lineno: int, line: str, source: str = "<string>") -> None:
        super().__init__(f"{source}, line {lineno}: {message}: {line.strip()!r}")
        self.message = message
        self.lineno = lineno
        self.line = line
        self.source = source


class MissingError(ConfigError, KeyError):
    """A section or key that is not in the configuration."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class InterpolationError(ConfigError):
    """A ``${...}`` reference points nowhere or back to itself."""


class ConversionError(ConfigError, ValueError):
    """A value cannot be read as the requested type."""
