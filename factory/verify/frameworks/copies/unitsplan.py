"""What a writer hands over once it has read a file's tests, and the plan made from it: which
tests to copy, which literal each copy changes, the new names, the ids they answer to.

A writer finds `Unit`s (one test each: the bytes a copy repeats, the bytes of its name, the
ids it answers to under a name) and, in each, the `Site`s whose change makes the test fail
for correct code. `plan_units` does the rest the same way for every such writer.

A site is only ever one the test reaches whatever the code under test does: a statement of
the test's own body, before anything that could end it early. A copy that passes for a
correct fix would refuse that fix, which is worse than no copy at all.
"""

from __future__ import annotations

import random
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
    plain: bool = True
    """False for a change a reader could tell from the original's kind of value (an expected
    exception swapped for a JDK one): used only where a test has no plain site."""


@dataclass
class Unit:
    """One test as its file holds it."""

    path: str
    start: int
    end: int
    """The bytes a copy repeats (the whole test: a method with its annotations, an `it(...)`)."""
    name: str
    name_start: int
    name_end: int
    """The bytes that name it (an identifier, a quoted title), and the name they spell."""
    written: Callable[[str], str]
    """A name as it is written at [name_start, name_end) (quoted, for a title)."""
    forms: Callable[[str], list[str]]
    """The ids the test answers to under a name, in a fixed order: the form an id matched in
    gives the form of its new id."""
    indent: str = ""
    """The whitespace its first line starts with."""
    sites: list[Site] = field(default_factory=list)
    why_not: str = ""
    """Why it must not be copied or renamed (its outcome depends on its name, ...)."""


@dataclass
class Reading:
    """A writer's reading of the files it was given."""

    units: list[Unit]
    grammar: dict[str, str]
    """Path -> the grammar that re-reads the file once changed (only files read cleanly)."""
    vocabulary: dict[str, list[str]]
    """Path -> the names of the file's tests, the words new names are drawn from."""
    taken: set[str]
    """Names a new one must not be (every identifier or title in the files)."""
    make: Callable[[list[str]], str]
    """A name in the language's style from words."""
    separator: Callable[[Unit], str]
    """What goes between a test and a copy placed beside it."""


def taint(units: list[Unit], markers: list[tuple[int, int]], why: str) -> None:
    """Units holding a marker (a snapshot, the test's own name read) get `why`; a marker in no
    unit (a hook, a helper) taints every unit of the file."""
    for start, end in markers:
        inside = [u for u in units if u.start <= start and end <= u.end]
        for unit in inside or units:
            unit.why_not = unit.why_not or why


def plan_units(reading: Reading, files: dict[str, str], f2p: list[str], ids: list[str],
               rng: random.Random) -> Copies:
    units = reading.units
    answers: dict[str, list[tuple[Unit, int]]] = {}
    for unit in units:
        for i, form in enumerate(unit.forms(unit.name)):
            answers.setdefault(clean(form), []).append((unit, i))
    every_form = set(answers)

    def match(test_id: str) -> list[tuple[Unit, int]]:
        return list({id(u): (u, i) for u, i in answers.get(clean(test_id), [])}.values())

    # an id that answers to two tests moves with neither: renaming one would change its grade
    shared = {id(u) for t in (*f2p, *ids) if len(m := match(t)) > 1 for u, _ in m}
    wanted: dict[int, list[str]] = {}
    uncopied: list[str] = []
    for test_id in dict.fromkeys(f2p):
        found = match(test_id)
        if len(found) != 1 or id(found[0][0]) in shared or found[0][0].why_not or not found[0][0].sites:
            uncopied.append(test_id)
        else:
            wanted.setdefault(id(found[0][0]), []).append(test_id)

    result = Copies()
    budget = PER_TASK
    for path in dict.fromkeys(u.path for u in units):
        chosen = [u for u in units if u.path == path and id(u) in wanted]
        if not chosen:
            continue
        edits: list[Edit] = []
        planned = Copies()
        for unit in chosen:
            changes = _changes(unit, min(PER_TEST, budget), rng)
            if not changes:
                planned.uncopied.extend(wanted[id(unit)])
                continue
            budget -= len(changes)
            names = [_name(reading, unit, every_form, rng) for _ in range(len(changes) + 1)]
            new_name, copy_names = names[0], names[1:]
            text = files[path].encode()[unit.start:unit.end].decode()
            sep = reading.separator(unit)
            before, after = "", ""
            for (site, new), name in zip(changes, copy_names, strict=True):
                copy = shifted(text, unit.start, [Edit(unit.name_start, unit.name_end, unit.written(name)),
                                                  Edit(site.start, site.end, new)])
                if rng.random() < 0.5:
                    before += copy + sep
                else:
                    after += sep + copy
            edits += [Edit(unit.start, unit.start, before), Edit(unit.end, unit.end, after),
                      Edit(unit.name_start, unit.name_end, unit.written(new_name))]
            for test_id in (*wanted[id(unit)], *ids):
                for matched, i in match(test_id):
                    if matched is unit:
                        planned.renamed[test_id] = unit.forms(new_name)[i]
            for test_id in wanted[id(unit)]:
                i = match(test_id)[0][1]
                for name in copy_names:
                    planned.copies[unit.forms(name)[i]] = test_id
        new_text = apply(files[path], [e for e in edits if e.text or e.start != e.end])
        if parse(reading.grammar[path], new_text) is None:
            uncopied.extend(t for u in chosen for t in wanted[id(u)])
            continue
        if new_text != files[path]:
            result.files[path] = new_text
        result.copies.update(planned.copies)
        result.renamed.update(planned.renamed)
        uncopied.extend(planned.uncopied)
    result.uncopied = list(dict.fromkeys(uncopied))
    return result


def _changes(unit: Unit, limit: int, rng: random.Random) -> list[tuple[Site, str]]:
    """Up to `limit` changes of one site: copies of a test differ from it and from each other at
    the same literal, so no twin is the centre the others are one edit from."""
    sites = list(unit.sites)
    rng.shuffle(sites)
    options = [(site, site.twins(limit, rng)) for site in sites] if limit else []
    best = max(options, key=lambda option: (option[0].plain, len(option[1])), default=None)
    return [(best[0], new) for new in best[1][:limit]] if best else []


def _name(reading: Reading, unit: Unit, every_form: set[str], rng: random.Random) -> str:
    """A fresh name from the words of the file's tests, whose ids answer to no test."""
    while True:
        name = draw_name(words(reading.vocabulary.get(unit.path, [])), reading.make, reading.taken, rng)
        if not {clean(f) for f in unit.forms(name)} & every_form:
            every_form.update(clean(f) for f in unit.forms(name))
            return name


def differs(old: str, new: str) -> bool:
    """Whether two number literals differ in value as the language holds them: `1e300` and
    `1.000000000000000005e300` are one double, `1e10f` and `1.0000000003e10f` one float."""
    a, b = _number(old), _number(new)
    return a is not None and b is not None and a != b


def _number(text: str) -> float | int | None:
    t = text.replace("_", "").lower()
    if len(t) > 1 and t[0] == "0" and t[1].isdigit():
        return None  # octal in Java and old JavaScript
    try:
        if t.endswith(("l", "n")):  # a Java long, a JavaScript BigInt: exact
            return int(t[:-1], 0)
        if t.startswith(("0x", "0b", "0o")):
            return float(int(t, 0))
        if t.endswith("f"):
            return struct.unpack("f", struct.pack("f", float(t[:-1])))[0]
        return float(t[:-1] if t.endswith("d") else t)
    except (ValueError, OverflowError, struct.error):
        return None


def indent_of(text: bytes, start: int) -> str:
    """The whitespace a line starts with when `start` is its first non-blank byte, else ''."""
    line = text[text.rfind(b"\n", 0, start) + 1:start]
    return line.decode() if not line.strip() else ""
