"""The :class:`Version` type: parsing, precedence and bumping (Semantic Versioning 2.0.0)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .errors import InvalidVersion

_IDENT = r"[0-9A-Za-z-]+"
_VERSION_RE = re.compile(
    rf"""
    ^v?
    (?P<major>[0-9]+)\.(?P<minor>[0-9]+)\.(?P<patch>[0-9]+)
    (?:-(?P<prerelease>{_IDENT}(?:\.{_IDENT})*))?
    (?:\+(?P<build>{_IDENT}(?:\.{_IDENT})*))?
    $
    """,
    re.VERBOSE,
)

Identifier = int | str
"""A pre-release identifier: numeric identifiers are kept as ``int``, the others as ``str``."""

BUMP_PARTS = ("major", "minor", "patch", "prerelease")


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class Version:
    """One semantic version such as ``1.4.0-rc.1+build.7``.

    Versions compare by precedence: build metadata is ignored, a pre-release sorts
    before the release it leads to, and numeric pre-release identifiers compare as
    numbers (``rc.2 < rc.10``).
    """

    major: int
    minor: int
    patch: int
    prerelease: tuple[Identifier, ...] = ()
    build: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Version:
        """Parse ``text`` (a leading ``v`` and surrounding blanks are allowed)."""
        if not isinstance(text, str):
            raise TypeError(f"expected a version string, got {type(text).__name__}")
        match = _VERSION_RE.match(text.strip())
        if match is None:
            raise InvalidVersion(f"not a semantic version: {text!r}")
        major, minor, patch = (
            parse_numeric(match[part], f"{part} version", text) for part in ("major", "minor", "patch")
        )
        prerelease = parse_prerelease(match["prerelease"], text) if match["prerelease"] else ()
        build = tuple(match["build"].split(".")) if match["build"] else ()
        return cls(major, minor, patch, prerelease, build)

    @classmethod
    def coerce(cls, value: Version | str) -> Version:
        """Return ``value`` as a :class:`Version`, parsing it if it is a string."""
        return value if isinstance(value, Version) else cls.parse(value)

    @property
    def is_prerelease(self) -> bool:
        return bool(self.prerelease)

    @property
    def release(self) -> tuple[int, int, int]:
        """The ``(major, minor, patch)`` triple."""
        return (self.major, self.minor, self.patch)

    def finalize(self) -> Version:
        """The release this version leads to: no pre-release and no build metadata."""
        return Version(self.major, self.minor, self.patch)

    def bump(self, part: str, label: str = "") -> Version:
        """Return the next version for ``part`` (``major``, ``minor``, ``patch`` or ``prerelease``).

        Bumping a pre-release to the part it already leads to only drops the pre-release
        tag (``2.0.0-rc.1`` bumped by ``major`` is ``2.0.0``), as npm does. ``label``
        names a new pre-release series (``1.2.3`` bumped by ``prerelease`` with label
        ``rc`` is ``1.2.4-rc.0``).
        """
        if part == "major":
            if self.prerelease and self.minor == 0 and self.patch == 0:
                return self.finalize()
            return Version(self.major + 1, 0, 0)
        if part == "minor":
            if self.prerelease and self.patch == 0:
                return self.finalize()
            return Version(self.major, self.minor + 1, 0)
        if part == "patch":
            if self.prerelease:
                return self.finalize()
            return Version(self.major, self.minor, self.patch + 1)
        if part == "prerelease":
            return self._bump_prerelease(label)
        raise ValueError(f"unknown version part {part!r}; expected one of {', '.join(BUMP_PARTS)}")

    def _bump_prerelease(self, label: str) -> Version:
        if not self.prerelease:
            start = (label, 0) if label else (0,)
            return Version(self.major, self.minor, self.patch + 1, start)
        if label and self.prerelease[0] != label:
            return Version(self.major, self.minor, self.patch, (label, 0))
        idents = list(self.prerelease)
        if isinstance(idents[-1], int):
            idents[-1] += 1
        else:
            idents.append(0)
        return Version(self.major, self.minor, self.patch, tuple(idents))

    def _key(self) -> tuple:
        if not self.prerelease:
            # A release has higher precedence than any of its pre-releases.
            return (*self.release, 1, ())
        idents = tuple((0, i, "") if isinstance(i, int) else (1, 0, i) for i in self.prerelease)
        return (*self.release, 0, idents)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: Version) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(str(i) for i in self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"Version('{self}')"


def parse_prerelease(text: str, source: str) -> tuple[Identifier, ...]:
    """Split a dotted pre-release tag into identifiers, numbers as ``int``."""
    idents: list[Identifier] = []
    for ident in text.split("."):
        if ident.isdigit():
            idents.append(parse_numeric(ident, "numeric pre-release identifier", source))
        else:
            idents.append(ident)
    return tuple(idents)


def parse_numeric(digits: str, what: str, source: str) -> int:
    """``int(digits)``, refusing leading zeros as the specification requires."""
    if len(digits) > 1 and digits.startswith("0"):
        raise InvalidVersion(f"{what} has a leading zero in {source!r}")
    return int(digits)


def compare(a: Version | str, b: Version | str) -> int:
    """Return -1, 0 or 1 as ``a`` has lower, equal or higher precedence than ``b``."""
    left, right = Version.coerce(a), Version.coerce(b)
    return (left > right) - (left < right)
