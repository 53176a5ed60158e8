"""What the writers of copies share: a real parser per language, edits by byte range, one
literal changed, names drawn from the words of a file's own tests.

Every writer parses with the language's tree-sitter grammar (never a regular expression), so
a string that looks like a test, a comment, or a raw string with braces is what the grammar
says it is. A file that does not parse cleanly gets no copies: a copy written into a file the
grammar misread could break a correct fix's build.
"""

from __future__ import annotations

import functools
import math
import random
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import tree_sitter

GRAMMARS = {
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
}


@functools.cache
def language(name: str) -> tree_sitter.Language:
    module, attribute = GRAMMARS[name]
    return tree_sitter.Language(getattr(__import__(module), attribute)())


def parse(name: str, text: str) -> tree_sitter.Node | None:
    """The root of `text` parsed as language `name`; None when the grammar finds an error in it."""
    root = tree_sitter.Parser(language(name)).parse(text.encode()).root_node
    return None if root.has_error else root


def walk(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """Every node under `node` (itself first), in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def source(node: tree_sitter.Node) -> str:
    return node.text.decode() if node.text is not None else ""


@dataclass(frozen=True)
class Edit:
    """Replace bytes [start, end) of the file's UTF-8 text with `text`."""

    start: int
    end: int
    text: str


def apply(text: str, edits: Iterable[Edit]) -> str:
    """`text` with `edits` (byte ranges of its UTF-8 encoding, not overlapping) applied."""
    data = text.encode()
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        data = data[:edit.start] + edit.text.encode() + data[edit.end:]
    return data.decode()


def shifted(text: str, base: int, edits: Iterable[Edit]) -> str:
    """`text` (the bytes of a node that starts at byte `base` of its file) with `edits` given in
    the file's offsets applied: how a writer changes a copy of one test while copying it."""
    return apply(text, [Edit(e.start - base, e.end - base, e.text) for e in edits])


_INT = re.compile(r"(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO]?[0-7_]+|[0-9][0-9_]*)([a-zA-Z0-9_]*)")
_BOUNDS = tuple(2 ** bits for bits in (7, 8, 15, 16, 31, 32, 63, 64))
"""Magnitudes just past an integer type's range (127 + 1, 255 + 1, ...)."""
_FLOAT = re.compile(r"([0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?)([a-zA-Z_]*)")


_WORD_CHAR = re.compile(r"[A-Za-z0-9]")


def _escaped(body: str, at: int) -> bool:
    """Whether the character at `at` is part of an escape sequence (`\\n`, `\\x41`, `\\u00e9`)."""
    start = max(0, at - 9)
    for i in range(at - 1, start - 1, -1):
        if body[i] == "\\":
            backslashes = len(body[:i + 1]) - len(body[:i + 1].rstrip("\\"))
            return backslashes % 2 == 1 and at - i <= 9 and body[i + 1:at + 1].isalnum()
        if not body[i].isalnum():
            return False
    return False


def changed_bool(literal: str) -> str | None:
    return {"true": "false", "false": "true", "True": "False", "False": "True"}.get(literal)


_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def words(names: Iterable[str]) -> list[str]:
    """The words of identifiers and titles, lower case, in first-seen order: `TestParseVersion`,
    `parse_version`, `parses a version` -> test, parse, version, parses, a."""
    found: dict[str, None] = {}
    for name in names:
        for part in re.split(r"[^A-Za-z0-9]+", name):
            for word in _CAMEL.findall(part):
                found.setdefault(word.lower(), None)
    return list(found)


def draw_name(vocabulary: list[str], make: callable, taken: set[str], rng: random.Random,
              fallback: Iterable[str] = ("case", "check", "value", "result", "input", "output")) -> str:
    """A name `make(words)` of 2 or 3 words from `vocabulary` (the file's own test words,
    topped up from `fallback`) that is not in `taken`; it is added to `taken`."""
    own = [w for w in dict.fromkeys(vocabulary) if w and not w.isdigit()]
    pool = own if len(own) >= 4 else list(dict.fromkeys([*own, *fallback]))  # the file's words first
    for attempt in range(200):
        picked = rng.sample(pool, min(len(pool), 2 + (attempt % 2)))
        name = make(picked)
        if name not in taken:
            taken.add(name)
            return name
    name = make([*rng.sample(pool, min(len(pool), 3)), str(rng.randint(2, 99))])
    taken.add(name)
    return name


def twin_numbers(literal: str, count: int, rng: random.Random, bounded: bool = False) -> list[str]:
    """`count` distinct changes of one number literal, in the same notation and with the same
    suffix (`10u8`, `3L`, `0x1F`, `2.50f`): with it, an evenly spaced set in which the original's
    place is drawn, never below 0 (a sign would not fit an unsigned type), never past its suffix's
    type, and (`bounded`: its context gives its type) never past an integer type's range it is in
    (`want uint8 = 250` + 9 would not compile). [] for a literal not read here (separators, an
    exponent). Copies of one test change the same literal, so a reader of the twins sees a set
    whose spread and order do not point at the original (the second red team ranked the old
    ones, each 2 to 9 away, and found it)."""
    value, ceiling, render = _number(literal, bounded) or (0, 0, None)
    if render is None or not count:
        return []
    # an evenly spaced set with the original at a place drawn uniformly among those the bounds
    # allow: its spread and order say nothing of which value is the original
    step = rng.randint(1, 9)
    places = [p for p in range(count + 1) if value - step * p >= 0 and value + step * (count - p) <= ceiling]
    if not places:
        return []
    place = rng.choice(places)
    return [render(value + step * (i - place)) for i in range(count + 1) if i != place]


def _number(literal: str, bounded: bool) -> tuple[int | float, int | float, Callable] | None:
    """(value, the largest it may become, how a value is written) of an integer or float literal."""
    match = _INT.fullmatch(literal)
    if "_" in literal:
        return None  # its twins would be written without the separators the original has
    if match and not (match[2][:1] in "eE" and match[2][1:].isdigit()):  # 1e9 is a float
        digits, suffix = match[1], match[2]
        base = 16 if digits[:2].lower() == "0x" else 2 if digits[:2].lower() == "0b" else 10
        if base == 10 and len(digits) > 1 and digits.startswith("0"):
            return None  # an octal literal in some languages, a decimal in others: left alone
        value = int(digits, base)
        if suffix[:1] in ("u", "i") and suffix[1:].isdigit():
            ceiling = 2 ** (int(suffix[1:]) - (suffix[0] == "i")) - 1
        else:
            ceiling = min([b - 1 for b in _BOUNDS if b >= value] if bounded else [], default=math.inf)
        prefix, upper = digits[:2], digits[2:] != digits[2:].lower()
        def write(v: int) -> str:  # the original's notation: its prefix, its case of hex digits
            body = format(v, "x" if base == 16 else "b") if base != 10 else str(v)
            return (prefix + (body.upper() if upper else body) if base != 10 else body) + suffix
        return value, ceiling, write
    match = _FLOAT.fullmatch(literal)
    if match and "." in match[1] and "e" not in match[1].lower() and (decimals := len(match[1].split(".")[1])):
        return float(match[1]), math.inf, lambda v: f"{v:.{decimals}f}" + match[2]
    return None


def twin_strings(body: str, count: int, rng: random.Random) -> list[str]:
    """`count` distinct changes of one string literal's contents, all at the same character
    (every twin, the original among them, is one edit from each of the others: no centre)."""
    plain = [m.start() for m in _WORD_CHAR.finditer(body) if not _escaped(body, m.start())]
    if not plain:
        return [body + c for c in rng.sample("bdfhkmqxz", min(count, 9))]
    at = rng.choice(plain)
    old = body[at]
    pool = [c for c in ("0123456789" if old.isdigit() else "abcdefghijklmnopqrstuvwxyz") if c != old.lower()]
    return [body[:at] + (c.upper() if old.isupper() else c) + body[at + 1:] for c in rng.sample(pool, min(count, len(pool)))]


def twin_quoted(text: str, start: int, end: int, count: int, rng: random.Random) -> list[str]:
    """`twin_strings` of a quoted literal whose contents are `text[start:end]` (its quotes, prefix
    and the like kept)."""
    return [text[:start] + body + text[end:] for body in twin_strings(text[start:end], count, rng)]
