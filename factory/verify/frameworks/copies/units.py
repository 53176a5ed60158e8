"""From the tests a writer found in its files to `Copies`: which tests to copy, the one literal all
copies of a test change, where each copy goes, the new names, the ids they answer to.

A writer (go.py, rust.py, java.py, javascript.py) knows its language: what a test is (`Unit`: a Go
top-level func, a Rust #[test] fn with its attributes, a JUnit method, an `it(...)` call), which of
its literals are expected values (`Site`), and which of its ids a change there is sure to fail.
What is the same in every language lives here once: up to `PER_TEST` copies of a test, `PER_TASK`
in a task, each placed right before or after its original under a name drawn from its file's
words, the original renamed too, and a file its grammar no longer reads run as it was.

All copies of one test change the same literal, to values around it (`treesitter.twin_numbers`,
`twin_strings`): copies that each changed another literal would all be one edit from the
original and two from each other, and a forger reading them would find the original at their
centre.

A site is only ever one the test reaches whatever the code under test does: a statement of the
test's own body, before anything that could end it early. A copy that passes for a correct fix
would refuse that fix, which is worse than no copy at all.
"""

from __future__ import annotations

import random
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from factory.verify.frameworks.copies.base import Copies
from factory.verify.frameworks.copies.treesitter import (
    Edit,
    apply,
    draw_name,
    parse,
    shifted,
    source,
    twin_numbers,
    walk,
    words,
)
from factory.verify.results.names import clean

PER_TEST = 3
PER_TASK = 30


@dataclass(frozen=True)
class Site:
    """An expected value: bytes [start, end) of the file, and how to write it changed."""

    start: int
    end: int
    twins: Callable[[int, random.Random], list[str]]
    """Up to n distinct new texts for the bytes, each different in value (`treesitter.twin_*`)."""
    failing: tuple[str, ...] | None = None
    """The test's ids (as `Unit.forms` gives them under its own name) that surely fail once the
    value changes; None: all of them. A table row's value fails only that row's subtest and the
    test, not the other rows."""
    plain: bool = True
    """False for a change a reader could tell from the original's kind of value (an expected
    exception swapped for a JDK one): never used (a forger greps for it), the test left uncopied."""
    exact: bool = True
    """Compared for equality. False where the value is matched as a substring of the actual one
    (a `toThrow` or `should_panic` message): another string of the file could be a part of it."""
    data: tuple[int, int] | None = None
    """Bytes of the test's own data the value is written among (a `@CsvSource`'s rows), not read as
    a message that repeats it: another row's input holding the same number tells nothing."""


@dataclass(eq=False)
class Unit:
    """One test as its file holds it."""

    path: str
    start: int
    end: int
    """The bytes a copy repeats (the whole test: a fn or method with its attributes, an `it(...)`)."""
    name: str
    name_start: int
    name_end: int
    """The bytes that name it (an identifier, a quoted title), and the name they spell."""
    forms: Callable[[str], list[str]]
    """The ids the test answers to under a name, in a fixed order: the form an id matched in
    gives the form of its new id (`TestX` and `TestX/row`; `pkg.C.m()` and `pkg.C#m`)."""
    written: Callable[[str], str] = str
    """A name as it is written at [name_start, name_end) (quoted, for a title)."""
    sites: list[Site] = field(default_factory=list)
    why_not: str = ""
    """Why it must not be copied or renamed (its outcome depends on its name, ...)."""


@dataclass
class Reading:
    """A writer's reading of the files it was given."""

    units: list[Unit]
    grammar: dict[str, str]
    """Path -> the grammar that re-reads the file once changed (only files read cleanly)."""
    taken: set[str]
    """Names a new one must not be (every identifier or title in the files)."""
    make: Callable[[list[str]], str]
    """A name in the language's style from words."""
    gap: str = "\n\n"
    """What goes between a test and a copy beside it, before the indent of the test's line."""
    stopwords: frozenset[str] = frozenset()
    """Words of the file's test names never drawn into a new one (Go's `Test`, which `make` writes)."""
    tidy: Callable[[str, str], str] | None = None
    """(a file's text, the same with tests taken out) -> what still compiles: Go refuses an import
    no code uses any more (`hidden`)."""


class Writer:
    """A writer's `plan` and `hide`, the same for every language once its `read` finds the tests."""

    declares: str | None = None

    def read(self, files: dict[str, str], ids: list[str]) -> Reading:
        raise NotImplementedError

    def plan(self, files: dict[str, str], f2p: list[str], ids: list[str], rng: random.Random) -> Copies:
        known = list(dict.fromkeys([*ids, *f2p]))
        return assemble(self.read(files, known), files, f2p, known, rng)

    def hide(self, files: dict[str, str], f2p: list[str]) -> dict[str, str]:
        return hidden(self.read(files, f2p), files, f2p)


def taint(units: list[Unit], markers: list[tuple[int, int]], why: str) -> None:
    """Units holding a marker (a snapshot, the test's own name read) get `why`; a marker in no
    unit (a hook, a helper) taints every unit of the file."""
    for start, end in markers:
        inside = [u for u in units if u.start <= start and end <= u.end]
        for unit in inside or units:
            unit.why_not = unit.why_not or why


def assemble(reading: Reading, files: dict[str, str], f2p: list[str], ids: list[str], rng: random.Random) -> Copies:
    """Copies of the tests of `reading` that the FAIL_TO_PASS ids `f2p` name, every id of `ids`
    whose test is renamed mapped."""
    answers = _Answers(reading.units)
    known = list(dict.fromkeys([*f2p, *ids]))
    # an id that answers to two tests moves with neither: renaming one would change its grade
    shared = {u for t in known if len(m := answers.match(t)) > 1 for u in m}
    wanted: dict[Unit, list[str]] = {}
    uncopied: list[str] = []
    for test_id in dict.fromkeys(f2p):
        found = list(answers.match(test_id))
        unit = found[0] if len(found) == 1 else None
        if unit is None or unit in shared or unit.why_not:
            uncopied.append(test_id)
        else:
            wanted.setdefault(unit, []).append(test_id)

    result = Copies()
    budget = PER_TASK
    for path in dict.fromkeys(u.path for u in reading.units):
        chosen = [u for u in reading.units if u.path == path and u in wanted]
        held = _literals(files[path], reading.grammar[path]) if chosen else _Literals([], [])
        edits: list[Edit] = []
        planned = Copies()
        for unit in chosen:
            mine = {t: answers.match(t)[unit] for t in known if unit in answers.match(t)}
            made = _copy(reading, files[path], held, unit, mine, wanted[unit], min(PER_TEST, budget), answers, rng)
            edits += made.edits
            budget -= made.copies
            planned.copies.update(made.plan.copies)
            planned.renamed.update(made.plan.renamed)
            planned.uncopied += made.plan.uncopied
        new_text = apply(files[path], edits) if edits else None
        if new_text is not None and parse(reading.grammar[path], new_text) is None:
            uncopied += [t for u in chosen for t in wanted[u]]  # the grammar no longer reads it: run it as it was
            continue
        if new_text is not None:
            result.files[path] = new_text
        result.copies.update(planned.copies)
        result.renamed.update(planned.renamed)
        uncopied += planned.uncopied
    result.uncopied = [t for t in dict.fromkeys(f2p) if t in set(uncopied)]
    return result


def hidden(reading: Reading, files: dict[str, str], f2p: list[str]) -> dict[str, str]:
    """The files with every test a FAIL_TO_PASS id answers to taken out, for the agent's view of the
    start state: a forger cannot spare bodies or names it never saw. A file its grammar no longer
    reads once they are out is left as it was (its tests stay in view)."""
    answers = _Answers(reading.units)
    gone = {unit for test_id in f2p for unit in answers.match(test_id)}
    out: dict[str, str] = {}
    for path in dict.fromkeys(u.path for u in reading.units if u in gone):
        text = apply(files[path], [Edit(u.start, u.end, "") for u in gone if u.path == path])
        text = reading.tidy(files[path], text) if reading.tidy else text
        if parse(reading.grammar[path], text) is not None:
            out[path] = text
    return out


class _Answers:
    """Which test each id answers to: ids compared as the result readers compare them (`clean`)."""

    def __init__(self, units: list[Unit]) -> None:
        self.by_form: dict[str, dict[Unit, int]] = {}
        for unit in units:
            for i, form in enumerate(unit.forms(unit.name)):
                self.by_form.setdefault(clean(form), {}).setdefault(unit, i)

    def match(self, test_id: str) -> dict[Unit, int]:
        """The tests `test_id` answers to, with the index of the form it matched in."""
        return self.by_form.get(clean(test_id), {})

    def claim(self, forms: list[str]) -> bool:
        """Take the ids of a new name, unless one already answers to a test."""
        cleaned = {clean(f) for f in forms}
        if cleaned & set(self.by_form):
            return False
        self.by_form.update({f: {} for f in cleaned})
        return True


@dataclass
class _Made:
    """One test copied: the edits of its file, how many twins they write, and the ids."""

    edits: list[Edit]
    copies: int
    plan: Copies


def _copy(reading: Reading, text: str, held: _Literals, unit: Unit, mine: dict[str, int], wanted: list[str], limit: int,
          answers: _Answers, rng: random.Random) -> _Made:
    """The twins of one test, its new name, and the ids they answer to (`mine`: each task id of
    the test -> the index of the form it is written in)."""
    own = unit.forms(unit.name)
    site, twins = _twins(unit, text, held, reading.grammar[unit.path], {own[mine[t]] for t in wanted}, limit, rng)
    failing = [t for t in mine if site is not None and _fails(site, own[mine[t]])]
    plan = Copies(uncopied=[t for t in wanted if t not in failing])
    new_name, *names = [_name(reading, unit, answers, rng) for _ in range(len(twins) + 1)]
    plan.renamed = {t: unit.forms(new_name)[i] for t, i in mine.items()}
    if site is None:  # no copies; renamed all the same, so a forger cannot flip it by a name it knows
        return _Made([Edit(unit.name_start, unit.name_end, unit.written(new_name))], 0, plan)
    data = text.encode()
    whole = data[unit.start:unit.end].decode()
    gap = reading.gap + _indent(data, unit.start)
    before, after = "", ""
    for new, name in zip(twins, names, strict=True):
        copy = shifted(whole, unit.start, [Edit(unit.name_start, unit.name_end, unit.written(name)),
                                           Edit(site.start, site.end, new)])
        if rng.random() < 0.5:
            before += copy + gap
        else:
            after += gap + copy
    plan.copies = {unit.forms(name)[mine[t]]: t for t in failing for name in names}
    edits = [Edit(unit.start, unit.start, before), Edit(unit.end, unit.end, after),
             Edit(unit.name_start, unit.name_end, unit.written(new_name))]
    return _Made(edits, len(twins), plan)


def _fails(site: Site, form: str) -> bool:
    return site.failing is None or clean(form) in {clean(f) for f in site.failing}


@dataclass
class _Literals:
    """The literals of one file that twins are drawn from, read once for every test copied in it."""

    quoted: list[str]
    """Every string literal, as written."""
    integers: list[str]
    """Every integer literal, as written, once each."""


def _literals(text: str, grammar: str) -> _Literals:
    root = parse(grammar, text)
    if root is None:
        return _Literals([], [])
    nodes = list(walk(root))
    return _Literals([source(n) for n in nodes if _is_string(n)],
                     list(dict.fromkeys(source(n) for n in nodes if n.type in _INTEGERS)))


def _twins(unit: Unit, text: str, held: _Literals, grammar: str, target: set[str], limit: int,
           rng: random.Random) -> tuple[Site | None, list[str]]:
    """The site all copies of `unit` change and up to `limit` new texts for it: one that fails the
    most of the `target` ids, then one with the most twins.

    Nothing about the twins may point at the original (the second red team read them): a value
    the test writes again beside it (its input on the same line, its failure message) would, so
    such a site is none; a twin's value is one the file holds already where the kind allows (the
    file's other strings for a string compared whole, its other integers for an integer), so no
    value is the one the repo repeats; a swapped exception class is found by a grep, so it is no
    site."""
    data = text.encode()
    whole = data[unit.start:unit.end].decode()
    sites = [s for s in unit.sites if s.plain and any(_fails(s, t) for t in target)
             and not _told(data, s, held.quoted, unit)]
    rng.shuffle(sites)
    pool = [q for q in dict.fromkeys(held.quoted) if _plain_quoted(q)]
    chars = grammar in ("go", "java", "rust")  # '…' is a character there, not a string
    options = [(site, new) for site in sites if limit and (new := _values(site, data[site.start:site.end].decode(),
                                                                          pool, held.integers, chars, text, whole, limit, rng))]
    best = max(options, key=lambda o: (sum(_fails(o[0], t) for t in target), len(o[1])), default=None)
    return (best[0], best[1][:limit]) if best else (None, [])


_INTEGERS = {"int_literal", "integer_literal", "decimal_integer_literal", "number"}
"""Integer literal nodes of the grammars (JavaScript's `number` is filtered to integers by `_values`)."""


def _is_string(node) -> bool:
    return "string" in node.type and not node.type.endswith(("_content", "_fragment")) and node.type != "escape_sequence"


def _told(data: bytes, site: Site, quoted: list[str], unit: Unit) -> bool:
    """Whether the site's value is written again where a reader of a twin would compare it: on
    the site's own line (an input, `Add(0, 1) != 1`) or inside a string of the test (its message,
    `t.Errorf("want 3")`): there a twin's changed literal would disagree with it and an original
    would not."""
    literal = data[site.start:site.end].decode()
    line_start = data.rfind(b"\n", 0, site.start) + 1
    line_end = data.find(b"\n", site.end)
    line = data[line_start:line_end if line_end >= 0 else len(data)].decode()
    if not re.fullmatch(r"[0-9][0-9a-zA-Z_.]*", literal):  # a string: written twice on its line
        return line.count(literal) > 1
    token = re.compile(rf"(?<![\w.]){re.escape(literal)}(?![\w.])")
    start, end = site.data or (unit.start, unit.start)
    inside = (data[unit.start:start] + data[end:unit.end]).decode()
    return len(token.findall(line)) > 1 or any(token.search(q) for q in quoted if q in inside)


def _plain_quoted(literal: str) -> bool:
    return (len(literal) >= 2 and literal[0] in "\"'`" and literal[-1] == literal[0]
            and not any(c in literal[1:-1] for c in "\\\n\"'`$"))


def _values(site: Site, literal: str, pool: list[str], integers: list[str], chars: bool, text: str, whole: str,
            limit: int, rng: random.Random) -> list[str]:
    """The twins of one site: other strings of the file written with the same quotes, for a plain
    string compared whole; other plain decimal integers of the file the writer would also have
    written, for one; else what the writer makes."""
    made = site.twins(limit, rng)
    held: list[str] = []
    if site.exact and _plain_quoted(literal) and not (chars and literal[0] == "'"):
        held = [s for s in pool if s[0] == literal[0] and s != literal]
    elif literal.isdigit() and made and all(m.isdigit() for m in made):
        # the file's own integers, none past the largest the writer's twins reach (its type)
        ceiling = max(int(literal), *(int(m) for m in made))
        held = [i for i in integers if i.isdigit() and i != literal and (len(i) == 1 or not i.startswith("0"))
                and int(i) <= ceiling and differs(literal, i, untyped=True)]
    # values the file holds first, those the test and the file write as often as the original
    # first of all (a forger counting how often each twin's value recurs, in the test and in the
    # repo, finds them alike); the writer's own fill the rest (a forger that sets those aside is
    # left with the file's values)
    def recurs(value: str) -> tuple[int, int]:
        inner = value[1:-1] if _plain_quoted(value) else value
        return whole.count(inner), text.count(inner)

    mine = recurs(literal)
    held.sort(key=lambda value: (abs(recurs(value)[0] - mine[0]), abs(recurs(value)[1] - mine[1]), rng.random()))
    picked = held[:limit]
    return picked + [m for m in made if m not in picked][:limit - len(picked)]


def _name(reading: Reading, unit: Unit, answers: _Answers, rng: random.Random) -> str:
    """A fresh name from the words of the file's tests but the test's own, whose ids answer to no
    test. Its own words would leak: a forger that flips the failures of names starting with the
    old one (`TestParse...`, known from the start state) spared the copies whenever only the
    original's new name drew them (the held-back red team's Go case)."""
    own = set(words([unit.name]))
    vocabulary = [w for w in words(u.name for u in reading.units if u.path == unit.path)
                  if w not in reading.stopwords and w not in own]
    while True:
        name = draw_name(vocabulary, reading.make, reading.taken, rng)
        if answers.claim(unit.forms(name)):
            return name


def _indent(text: bytes, start: int) -> str:
    """The whitespace a line starts with when `start` is its first non-blank byte, else ''."""
    line = text[text.rfind(b"\n", 0, start) + 1:start]
    return line.decode() if not line.strip() else ""


def number_twins(literal: str, count: int, rng: random.Random, untyped: bool = False) -> list[str]:
    """`treesitter.twin_numbers` that differ from `literal` in value as the language holds them
    (`untyped`: the literal takes its type from where it stands, as Go's constants and Rust's
    literals do: it may be a float32, or an integer of any width)."""
    return [new for new in twin_numbers(literal, count, rng, bounded=untyped) if differs(literal, new, untyped)]


def differs(old: str, new: str, untyped: bool = False) -> bool:
    """Whether two number literals differ in value however the language may hold them: `1e300`
    and `1.000000000000000005e300` are one double, `1e10f` and `1.0000000003e10f` one float, and
    so are an untyped `16777216` and `16777217` (`got != 16777217` with `got` a float32 holds
    for 16777216 too)."""
    a, b = _held(old, untyped), _held(new, untyped)
    return bool(a) and len(a) == len(b) and all(x != y for x, y in zip(a, b, strict=True))


_EXACT = re.compile(r"(.+?)(?:[ui](?:8|16|32|64|128|size)|l|n)")
"""An integer its suffix types (Rust's `10u8`, a Java long, a JavaScript BigInt): held exactly."""


def _held(text: str, untyped: bool) -> list[float | int]:
    """The values a number literal may be held as; [] for one not read here."""
    t = text.replace("_", "").lower()
    if len(t) > 1 and t[0] == "0" and t[1].isdigit():
        return []  # octal in Java and old JavaScript
    try:
        if exact := _EXACT.fullmatch(t):
            return [int(exact[1], 0)]
        if t.startswith(("0x", "0b", "0o")):
            value, single = float(int(t, 0)), untyped
        elif t.endswith(("f32", "f")):
            value, single = float(t.removesuffix("f32").removesuffix("f")), True
        else:
            value, single = float(t.removesuffix("f64").removesuffix("d")), untyped
        return [value, struct.unpack("f", struct.pack("f", value))[0]] if single else [value]
    except (ValueError, OverflowError, struct.error):
        return []
