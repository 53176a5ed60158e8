"""Version ranges in npm's syntax.

A range is one or more comparator sets joined by ``||``; a version satisfies the range
when it satisfies every comparator of at least one set. Besides plain comparators
(``>=1.2.0 <2.0.0``) a set may use the usual shorthands, which are expanded when the
range is parsed:

========================  ==================================
``^1.2.3``                ``>=1.2.3 <2.0.0-0``
``^0.2.3`` / ``^0.0.3``   ``>=0.2.3 <0.3.0-0`` / ``>=0.0.3 <0.0.4-0``
``~1.2.3`` / ``~1``       ``>=1.2.3 <1.3.0-0`` / ``>=1.0.0 <2.0.0-0``
``1.2.x`` / ``1``         ``>=1.2.0 <1.3.0-0`` / ``>=1.0.0 <2.0.0-0``
``1.2.3 - 2.3``           ``>=1.2.3 <2.4.0-0``
``*`` or empty            any release
========================  ==================================

The ``-0`` upper bounds are the lowest versions of the next release line, so that
``^1.2.3`` excludes ``2.0.0-alpha`` as well as ``2.0.0``.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .errors import InvalidRange, InvalidVersion
from .version import Identifier, Version, parse_numeric, parse_prerelease

_FLOOR: tuple[Identifier, ...] = (0,)
_WILDCARDS = ("x", "X", "*")
_TESTS: dict[str, Callable[[int, int], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "=": operator.eq,
}
_PARTIAL_RE = re.compile(
    r"^v?(?P<core>[0-9xX*.]+)(?:-(?P<pre>[0-9A-Za-z.-]+))?(?:\+(?P<build>[0-9A-Za-z.-]+))?$"
)
_TOKEN_RE = re.compile(r"^(?P<op><=|>=|<|>|=|\^|~|)(?P<partial>\S+)$")
_HYPHEN_RE = re.compile(r"^(?P<low>\S+)\s+-\s+(?P<high>\S+)$")
_GLUED_OPERATOR_RE = re.compile(r"(<=|>=|<|>|=|\^|~)\s+")


@dataclass(frozen=True)
class Comparator:
    """One primitive condition such as ``>=1.2.3``."""

    operator: str
    version: Version

    def test(self, version: Version) -> bool:
        order = (version > self.version) - (version < self.version)
        return _TESTS[self.operator](order, 0)

    def __str__(self) -> str:
        return f"{'' if self.operator == '=' else self.operator}{self.version}"


ANY = Comparator(">=", Version(0, 0, 0))
NOTHING = Comparator("<", Version(0, 0, 0, _FLOOR))


@dataclass(frozen=True)
class _Partial:
    """A version whose trailing parts may be left out or wildcarded (``1``, ``1.2.x``, ``*``)."""

    major: int | None
    minor: int | None
    patch: int | None
    prerelease: tuple[Identifier, ...] = ()

    def floor(self) -> Version:
        """The lowest release the partial covers (``1.2.x`` -> ``1.2.0``)."""
        return Version(self.major or 0, self.minor or 0, self.patch or 0, self.prerelease)

    def next_up(self) -> Version:
        """The lowest version above everything the partial covers (``1.2.x`` -> ``1.3.0-0``)."""
        assert self.major is not None and self.patch is None
        if self.minor is None:
            return Version(self.major + 1, 0, 0, _FLOOR)
        return Version(self.major, self.minor + 1, 0, _FLOOR)


class Range:
    """A parsed version range; ``version in Range(text)`` tests membership."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"expected a range string, got {type(text).__name__}")
        self.text = text
        try:
            self.sets = tuple(_parse_set(part, text) for part in text.split("||"))
        except InvalidVersion as exc:
            raise InvalidRange(f"{exc} (in range {text!r})") from exc

    def contains(self, version: Version | str, *, include_prerelease: bool = False) -> bool:
        """Whether ``version`` satisfies the range.

        A pre-release only satisfies a range that names a pre-release of the same
        ``major.minor.patch`` (so ``^1.2.0`` never picks up ``1.3.0-beta`` by accident),
        unless ``include_prerelease`` is true.
        """
        candidate = Version.coerce(version)
        return any(_set_matches(s, candidate, include_prerelease) for s in self.sets)

    def __contains__(self, version: Version | str) -> bool:
        return self.contains(version)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Range):
            return NotImplemented
        return self.sets == other.sets

    def __hash__(self) -> int:
        return hash(self.sets)

    def __str__(self) -> str:
        return " || ".join(" ".join(str(c) for c in comparators) for comparators in self.sets)

    def __repr__(self) -> str:
        return f"Range({self.text!r})"


def satisfies(version: Version | str, range_: Range | str, *, include_prerelease: bool = False) -> bool:
    """Shorthand for ``Range(range_).contains(version)``."""
    return _as_range(range_).contains(version, include_prerelease=include_prerelease)


def max_satisfying(
    versions: Iterable[Version | str], range_: Range | str, *, include_prerelease: bool = False
) -> Version | None:
    """The highest of ``versions`` that satisfies ``range_``, or ``None``."""
    matching = _matching(versions, _as_range(range_), include_prerelease)
    return max(matching, default=None)


def min_satisfying(
    versions: Iterable[Version | str], range_: Range | str, *, include_prerelease: bool = False
) -> Version | None:
    """The lowest of ``versions`` that satisfies ``range_``, or ``None``."""
    matching = _matching(versions, _as_range(range_), include_prerelease)
    return min(matching, default=None)


def _as_range(range_: Range | str) -> Range:
    return range_ if isinstance(range_, Range) else Range(range_)


def _matching(versions: Iterable[Version | str], range_: Range, include_prerelease: bool) -> list[Version]:
    candidates = (Version.coerce(v) for v in versions)
    return [v for v in candidates if range_.contains(v, include_prerelease=include_prerelease)]


def _set_matches(comparators: tuple[Comparator, ...], version: Version, include_prerelease: bool) -> bool:
    if not all(c.test(version) for c in comparators):
        return False
    if not version.prerelease or include_prerelease:
        return True
    return any(c.version.prerelease and c.version.release == version.release for c in comparators)


def _parse_set(text: str, source: str) -> tuple[Comparator, ...]:
    text = _GLUED_OPERATOR_RE.sub(r"\1", text.strip())
    if not text:
        return (ANY,)
    hyphen = _HYPHEN_RE.match(text)
    if hyphen:
        return _hyphen(_parse_partial(hyphen["low"], source), _parse_partial(hyphen["high"], source))
    comparators: list[Comparator] = []
    for token in text.split():
        match = _TOKEN_RE.match(token)
        if match is None:
            raise InvalidRange(f"cannot read {token!r} in range {source!r}")
        comparators.extend(_expand(match["op"], _parse_partial(match["partial"], source)))
    return tuple(comparators)


def _parse_partial(text: str, source: str) -> _Partial:
    match = _PARTIAL_RE.match(text)
    if match is None:
        raise InvalidRange(f"{text!r} is not a version in range {source!r}")
    parts = match["core"].split(".")
    if len(parts) > 3:
        raise InvalidRange(f"{text!r} has more than three parts in range {source!r}")
    numbers: list[int | None] = []
    for part in parts:
        if part in _WILDCARDS:
            numbers.append(None)
        elif not part.isdigit():
            raise InvalidRange(f"{text!r} has an empty part in range {source!r}")
        elif numbers and numbers[-1] is None:
            raise InvalidRange(f"{text!r} has a number after a wildcard in range {source!r}")
        else:
            numbers.append(parse_numeric(part, "version part", text))
    numbers += [None] * (3 - len(numbers))
    prerelease: tuple[Identifier, ...] = ()
    if match["pre"]:
        if None in numbers:
            raise InvalidRange(f"{text!r}: a pre-release needs a full version, in range {source!r}")
        prerelease = parse_prerelease(match["pre"], text)
    return _Partial(numbers[0], numbers[1], numbers[2], prerelease)


def _expand(op: str, partial: _Partial) -> list[Comparator]:
    if op == "^":
        return _caret(partial)
    if op == "~":
        return _tilde(partial)
    if op in ("", "="):
        return _xrange(partial)
    return _primitive(op, partial)


def _xrange(p: _Partial) -> list[Comparator]:
    if p.major is None:
        return [ANY]
    if p.patch is None:
        return [Comparator(">=", p.floor()), Comparator("<", p.next_up())]
    return [Comparator("=", p.floor())]


def _tilde(p: _Partial) -> list[Comparator]:
    if p.major is None:
        return [ANY]
    if p.minor is None:
        upper = Version(p.major + 1, 0, 0, _FLOOR)
    else:
        upper = Version(p.major, p.minor + 1, 0, _FLOOR)
    return [Comparator(">=", p.floor()), Comparator("<", upper)]


def _caret(p: _Partial) -> list[Comparator]:
    """Allow every change that keeps the left-most non-zero part."""
    if p.major is None:
        return [ANY]
    if p.major > 0 or p.minor is None:
        upper = Version(p.major + 1, 0, 0, _FLOOR)
    elif p.minor > 0 or p.patch is None:
        upper = Version(0, p.minor + 1, 0, _FLOOR)
    else:
        upper = Version(0, 0, p.patch + 1, _FLOOR)
    return [Comparator(">=", p.floor()), Comparator("<", upper)]


def _primitive(op: str, p: _Partial) -> list[Comparator]:
    if p.major is None:
        # '>=*' and '<=*' allow everything, '>*' and '<*' nothing.
        return [ANY] if op in (">=", "<=") else [NOTHING]
    if p.patch is not None:
        return [Comparator(op, p.floor())]
    if op == ">":
        return [Comparator(">=", p.next_up().finalize())]
    if op == "<=":
        return [Comparator("<", p.next_up())]
    if op == "<":
        floor = p.floor()
        return [Comparator("<", Version(floor.major, floor.minor, floor.patch, _FLOOR))]
    return [Comparator(">=", p.floor())]


def _hyphen(low: _Partial, high: _Partial) -> list[Comparator]:
    lower = ANY if low.major is None else Comparator(">=", low.floor())
    if high.major is None:
        upper = ANY
    elif high.patch is None:
        upper = Comparator("<", high.next_up())
    else:
        upper = Comparator("<=", high.floor())
    return [lower, upper]
