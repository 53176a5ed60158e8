"""The changed values of a copy: another value for a literal that leaves no trace.

A reader who sees an original beside its copies must find no member special (`Group`): the
numbers of a group are each 2 to 9 from every other member and on one side of zero, with the
original at a random rank, not their centre; a string changes at one character to one that
leaves the text about it as familiar, counted in the rest of the file, as the original's (one
letter changed in a word is a typo, and a reader counting finds the real word), or, where the
file echoes it elsewhere, becomes another string the file echoes alike; a raise-only test
expects another error class its file names, unrelated in the repo's class tree. `trace` says
how much a site leaves a reader to go on, so that the planner takes the quietest.
"""

from __future__ import annotations

import ast
import functools
import itertools
import math
import random
import re
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from factory.verify.classes import Classes
from factory.verify.mutants import (
    FILLED,
    THIRD_VALUES,
    Edit,
    Source,
    empty,
    literal,
    odd,
    other_errors,
    tail,
)

_QUOTE = re.compile(r"(?i)([rbu]{0,2})('''|\"\"\"|'|\")")


def file_errors(src: Source, name: str, classes: Classes | None) -> list[str]:
    """Error classes the test file names (imported or defined there) that a copy may expect where
    its original expects `name`: unrelated to it in the repo's class tree (`classes.py`)."""
    if classes is None:
        return []
    return sorted(n for n in src.named if n != name and classes.error(n) and classes.unrelated(name, n))


@dataclass
class Group:
    """How the copies of one literal differ from it and from each other, so that a reader who sees
    the original and its copies side by side finds no member special: numbers 2 to 9 from every
    other member and on one side of zero, with the original at a random rank (not their centre);
    strings changed at one character (the same in every copy, else the original is their common
    middle) to ones that leave the text as familiar as it was (`familiar`), digits there 2 or
    more apart."""

    copies: int
    spot: float
    """Which safe character of a string changes, in [0, 1)."""
    flip: bool = False
    """Booleans may become each other (the check comes after the one the bug breaks)."""
    hint: str = ""
    """The task's problem statement: the agent has it, and a value it names shows the original."""
    classes: Classes | None = None
    """The repo's class tree, for the error classes a copy of a raise-only test may expect."""
    drawn: dict[int, list] = field(default_factory=dict)
    """Each literal's (by position in the file) values for its copies, drawn once, handed out in turn."""

    def nth(self, key: int, nth: int, draw: Callable[[], list]):
        """Copy `nth`'s value of the literal at `key`: the group's values are drawn by `draw` once."""
        if key not in self.drawn:
            self.drawn[key] = draw()
        values = self.drawn[key]
        return values[nth % len(values)]


def frame(value: float, copies: int, rng: random.Random, low: float | None = None, high: float | None = None,
          gaps: tuple[int, ...] = (2, 3)) -> list[float]:
    """Offsets from `value` for `copies` copies: the group's members 2 or more apart (never by one:
    an off-by-one bug must not pass a copy) and within 9 of each other, inside [low, high], with
    `value` at a random rank among those that fit."""
    steps = [rng.choice(gaps if copies <= 3 else (2,)) for _ in range(copies)]
    positions = [0]
    for step in steps:
        positions.append(positions[-1] + step)
    fits = [r for r in range(len(positions))
            if (low is None or value - positions[r] >= low) and (high is None or value - positions[r] + positions[-1] <= high)]
    rank = rng.choice(fits) if fits else 0
    offsets = [p - positions[rank] for i, p in enumerate(positions) if i != rank]
    rng.shuffle(offsets)
    return offsets


class Corpus:
    """A file's text as a reader counting echoes sees it, counted fast: `count` is `str.count`, but
    a stretch the text does not hold at all (most of the candidates a copy is scored on) costs a
    lookup, not a scan of the whole file."""

    def __init__(self, text: str):
        self.text = text
        self._grams = Counter(text[a:a + n] for n in (2, 3, 4) for a in range(len(text) - n + 1))
        self._counts: dict[str, int] = {}

    def count(self, part: str) -> int:
        if part not in self._counts:
            short = part if len(part) <= 4 else part[:4]
            if len(short) >= 2 and not self._grams[short]:
                self._counts[part] = 0  # absent as a stretch of its own: absent as part of anything longer
            elif len(part) <= 4 and len(part) >= 2 and not _overlaps(part):
                self._counts[part] = self._grams[part]  # no overlapping occurrences: the same as str.count
            else:
                self._counts[part] = self.text.count(part)
        return self._counts[part]


def _overlaps(part: str) -> bool:
    """Two occurrences of `part` can overlap ("aa", "abab"): `str.count` counts them once."""
    return any(part[:k] == part[-k:] for k in range(1, len(part)))


@functools.lru_cache(maxsize=8)
def _corpus(src: Source, start: int, end: int) -> Corpus:
    return Corpus((src.data[:start] + b"\0" + src.data[end:]).decode(errors="replace"))


def corpus(src: Source, node: ast.expr) -> Corpus:
    """The file as a reader counting echoes of `node`'s string sees it: all of it, the test's own
    inputs and the other rows of its table included, but the string itself (built once per string:
    the planner scores a site and then makes each of its copies)."""
    return _corpus(src, *src.span(node))


def _windows(text: str, i: int) -> list[str]:
    """The stretches of 2 to 4 characters around position i, and the whole text."""
    return [text, *(text[a:a + w] for w in (2, 3, 4) for a in range(max(0, i - w + 1), i + 1) if a + w <= len(text))]


def familiar(text: str, i: int, corpus: Corpus | str) -> float:
    """How familiar a reader finds `text` around position i: how often the file already has it."""
    counted = corpus if isinstance(corpus, Corpus) else Corpus(corpus)
    return sum(math.log1p(counted.count(w)) for w in _windows(text, i))


def _text_spots(literal: str) -> tuple[int, str, list[int]] | None:
    """(where the body starts, the body, positions of its letters and digits) of a plain one-line string literal."""
    match = _QUOTE.match(literal)
    if not match:
        return None
    head, quote = match.end(), match.group(2)
    body = literal[head:-len(quote)] if len(literal) >= head + len(quote) and literal.endswith(quote) else None
    if body is None or quote[0] in body or "\\" in body or "\n" in body:
        return None
    return head, body, [i for i, ch in enumerate(body) if ch.isascii() and ch.isalnum()]


def _letters(body: str, i: int, corpus: Corpus) -> list[str]:
    """Letters for position i that leave the text at least as familiar to a reader as the original:
    one letter changed in a word is a typo, and counting how often the file has each stretch finds it."""
    ch = body[i]
    pool = (string.ascii_uppercase if ch.isupper() else string.ascii_lowercase).replace(ch, "")
    base = familiar(body, i, corpus)
    return [c for c in pool if familiar(body[:i] + c + body[i + 1:], i, corpus) >= base]


def _digit_sets(body: str, i: int, text: Corpus, copies: int) -> list[list[str]]:
    """Sets of `copies` digits for position i, each 2 or more from the original and from each other
    (a digit 2 from the original but 1 from another copy shows which is the original), none leaving
    the text less familiar than the original."""
    base, digit = familiar(body, i, text), int(body[i])
    fit = [d for d in range(10) if abs(d - digit) >= 2 and familiar(body[:i] + str(d) + body[i + 1:], i, text) >= base]
    return [[str(d) for d in c] for c in itertools.combinations(fit, copies)
            if all(abs(a - b) >= 2 for a, b in itertools.combinations(c, 2))]


def _spread(digit: str, copies: int, rng: random.Random) -> list[str]:
    """Digits 2 or more from `digit` and from each other, when no set is as familiar."""
    return [str(int(digit) + o) for o in frame(int(digit), copies, rng, 0, 9, gaps=(2,))]


def safe_spots(literal: str, text: Corpus, copies: int = 1) -> list[int]:
    """Characters of a string literal whose change leaves no trace a reader can count: digits
    (copies 2 or more apart, none more familiar), else letters with `copies` replacements no less
    familiar than the original. None where the file echoes the whole string elsewhere."""
    found = _text_spots(literal)
    if found is None:
        return []
    _, body, spots = found
    if body in text.text:
        return []
    digits = [i for i in spots if body[i].isdigit() and _digit_sets(body, i, text, copies)]
    return digits or [i for i in spots if body[i].isalpha() and len(_letters(body, i, text)) >= copies]


def named_in(hint: str, node: ast.expr) -> bool:
    """The problem statement names the literal's value (a number of two digits or more, as a word
    of its own: single digits are in every text)."""
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, str):
        return len(value) >= 2 and value in hint
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) >= 10 and bool(
        re.search(rf"(?<![\w.]){re.escape(repr(value))}(?![\w]|\.\d)", hint))


def trace(src: Source, node: ast.expr, copies: int = 1, classes: Classes | None = None, hint: str = "") -> int:
    """What a reader who sees a site's copies beside their original can go on: 0 nothing (a number),
    1 little (a string changed where its surroundings are as familiar either way), 2 enough (`odd`
    values, an expected error class from the builtin list, a string the file echoes, a value the
    problem statement names)."""
    if named_in(hint, getattr(node, "operand", node)):
        return 2
    if isinstance(node, (ast.Name, ast.Attribute)):
        return 1 if file_errors(src, tail(node), classes) else 2
    if odd(node):
        return 2
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        return 1 if safe_spots(src.text(*src.span(node)), corpus(src, node), copies) else 2
    return 0


def mutate(src: Source, node: ast.expr, rng: random.Random, group: Group | None = None, nth: int = 0) -> Edit | None:
    """Copy `nth` of the group's edit to the scalar literal at `node` (another value of the same
    type), or to the expected exception class at `node` (another class).

    `True` and `False` become a third value (`THIRD_VALUES`), so that a bug that gives the other
    boolean fails the copy as it fails the original; with `group.flip` (the check comes after the
    one the bug breaks) they become each other."""
    group = group or Group(copies=1, spot=rng.random())
    if isinstance(node, (ast.Name, ast.Attribute)):
        start, end = src.span(node)
        # the classes the file names (fewer copies where it names fewer), else builtins no library raises
        free = file_errors(src, tail(node), group.classes) or [
            o for o in other_errors(tail(node)) if o.encode() not in src.data]  # none that the file rebinds
        return Edit(start, end, group.nth(start, nth, lambda: rng.sample(free, len(free)))) if free else None
    if empty(node):
        return Edit(*src.span(node), FILLED[type(node)].format(rng.choice(THIRD_VALUES)))
    if isinstance(node, ast.UnaryOp):
        node = node.operand  # -5 -> -8: the sign stays
    start, end = src.span(node)
    value, old = node.value, src.text(start, end)
    if value is None:
        new = rng.choice(("False", "True", "..."))
    elif isinstance(value, bool):
        new = str(not value) if group.flip else rng.choice(THIRD_VALUES)
    elif isinstance(value, (int, float)):
        shifted = value + group.nth(start, nth, lambda: frame(value, group.copies, rng, 0 if value >= 0 else None,
                                                              -1 if value < 0 else None))
        new = str(int(shifted)) if isinstance(value, int) else repr(float(shifted))
    else:
        new = _mutate_text(old, rng, group, start, nth, corpus(src, node))
    try:
        changed = literal(new)
    except (ValueError, SyntaxError):
        return None
    same_kind = value is None or isinstance(value, bool) or type(changed) is type(value)
    if not same_kind or changed == value:
        return None
    return Edit(start, end, new)


def _mutate_text(literal: str, rng: random.Random, group: Group, key: int, nth: int, text: Corpus) -> str:
    """Change one letter or digit inside a string literal (a safe one where there is one); insert
    one where none can change."""
    found = _text_spots(literal)
    if found is None or not found[2]:
        match = _QUOTE.match(literal)
        return literal[:match.end()] + rng.choice(string.ascii_lowercase) + literal[match.end():] if match else literal
    head, body, spots = found
    spots = safe_spots(literal, text, group.copies) or spots
    i = spots[int(group.spot * len(spots))]
    if body[i].isdigit():
        new = group.nth(key, nth, lambda: rng.choice(_digit_sets(body, i, text, group.copies) or [_spread(body[i], group.copies, rng)]))
    else:
        new = rng.choice(_letters(body, i, text) or string.ascii_lowercase.replace(body[i].lower(), ""))
    return literal[:head + i] + new + literal[head + i + 1:]
