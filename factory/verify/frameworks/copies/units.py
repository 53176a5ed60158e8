"""From the test units a writer found to `Copies`: which sites to change, where each copy goes, the
fresh names, and the re-parse that keeps a file the grammar no longer reads out of the run.

A writer (go.py, rust.py) knows its language: what a test unit is (a Go top-level func, a Rust
#[test] fn with its attributes), which of its literals are expected values (`Site`), and which
task ids a change there is sure to fail. What is the same in every language lives here once:
up to `PER_TEST` copies of a unit, `MAX_COPIES` in a task, each placed right before or after
its original under a name drawn from its file's words, and the original renamed too.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from factory.verify.frameworks.copies.base import Copies
from factory.verify.frameworks.copies.treesitter import (
    Edit,
    apply,
    changed_number,
    draw_name,
    parse,
    shifted,
)

_INT_SUFFIX = re.compile(r"[ui](?:8|16|32|64|128|size)$")
_FLOAT_SUFFIX = re.compile(r"(?:f32|f64|[ilfd])$")
PER_TEST = 3
MAX_COPIES = 30


@dataclass(frozen=True)
class Site:
    """One expected literal of a unit: bytes [start, end) of its file."""

    start: int
    end: int
    change: Callable[[random.Random], str | None]
    """A new text for the literal (another value each call); None when it has none."""
    failing: tuple[str, ...]
    """Ids of the original (as the task names them) that fail once this literal changes."""


@dataclass(eq=False)
class Unit:
    """A test as a writer found it in a file: what is copied whole."""

    path: str
    start: int
    end: int
    """Bytes of the whole unit (attributes and all), in its file."""
    name: tuple[int, int]
    """Bytes of its name."""
    ids: list[str]
    """The task ids it reports (itself, its subtests), as the task names them."""
    rename: Callable[[str, str], str]
    """(a task id of this unit, a new name for the unit) -> the id it is reported under then."""
    sites: list[Site] = field(default_factory=list)
    keyed: bool = False
    """Its outcome depends on its own name (golden files, snapshots): never copied or renamed."""


@dataclass
class Style:
    """A language's part in assembling: its grammar, how its names look, what each file may use."""

    language: str
    make: Callable[[list[str]], str]
    """Words -> a test name in the language's style."""
    vocabulary: dict[str, list[str]]
    """File -> the words of its own test names."""
    taken: set[str]
    """Every name a new one must not be (all identifiers of the files given)."""


def assemble(files: dict[str, str], units: list[Unit], f2p: list[str], ids: list[str], style: Style,
             rng: random.Random) -> Copies:
    """Copies of `units` for the FAIL_TO_PASS ids `f2p`, every rename of an id in `ids` mapped."""
    owners: dict[str, list[Unit]] = {}
    for unit in units:
        for test_id in unit.ids:
            owners.setdefault(test_id, []).append(unit)
    wanted = [i for i in f2p if len(owners.get(i, [])) == 1]  # an id two units report is no one's
    known = set(ids) | set(f2p)
    edits: dict[str, list[Edit]] = {}
    placed: dict[str, dict[str, str]] = {}  # path -> (copy id -> original id)
    moved: dict[str, dict[str, str]] = {}  # path -> renames
    covered: set[str] = set()
    budget = MAX_COPIES
    for unit in dict.fromkeys(owners[i][0] for i in wanted):
        if budget <= 0 or unit.keyed:
            continue
        target = set(unit.ids) & set(wanted)
        sites = [s for s in unit.sites if target & set(s.failing)]
        changes = _changes(sites, target, min(PER_TEST, budget), rng)
        if not changes:
            continue
        text = files[unit.path]
        data = text.encode()
        whole = data[unit.start:unit.end].decode()
        indent = _indent(data, unit.start)
        before, after = [], []
        for site, literal in changes:
            name = draw_name(style.vocabulary.get(unit.path, []), style.make, style.taken, rng)
            copy = shifted(whole, unit.start, [Edit(*unit.name, name), Edit(site.start, site.end, literal)])
            (before if rng.random() < 0.5 else after).append(copy)
            for test_id in site.failing:
                if test_id in known:
                    placed.setdefault(unit.path, {})[unit.rename(test_id, name)] = test_id
                    covered.add(test_id)
        fresh = draw_name(style.vocabulary.get(unit.path, []), style.make, style.taken, rng)
        moved.setdefault(unit.path, {}).update({i: unit.rename(i, fresh) for i in unit.ids if i in known})
        file_edits = edits.setdefault(unit.path, [])
        file_edits.append(Edit(*unit.name, fresh))
        if before:
            file_edits.append(Edit(unit.start, unit.start, "".join(c + "\n\n" + indent for c in before)))
        if after:
            file_edits.append(Edit(unit.end, unit.end, "".join("\n\n" + indent + c for c in after)))
        budget -= len(changes)
    result = Copies()
    for path, file_edits in edits.items():
        new = apply(files[path], file_edits)
        if parse(style.language, new) is None:  # the grammar no longer reads it: run the file as it was
            covered -= set(placed.get(path, {}).values())
            continue
        result.files[path] = new
        result.copies.update(placed.get(path, {}))
        result.renamed.update(moved.get(path, {}))
    result.uncopied = [i for i in f2p if i not in covered]
    return result


def _changes(sites: list[Site], target: set[str], count: int, rng: random.Random) -> list[tuple[Site, str]]:
    """Up to `count` (site, new literal) pairs, all different: sites that fail the most of `target`
    first, each site once before any twice."""
    order = sorted(rng.sample(sites, len(sites)), key=lambda s: -len(target & set(s.failing)))
    chosen: list[tuple[Site, str]] = []
    for _ in range(count):  # a round gives each site one more literal
        for site in order:
            if len(chosen) == count:
                return chosen
            done = {literal for s, literal in chosen if s == site}
            literal = next((c for c in (site.change(rng) for _ in range(6)) if c and c not in done), None)
            if literal is not None:
                chosen.append((site, literal))
    return chosen


def number_change(literal: str, rng: random.Random) -> str | None:
    """`changed_number`, for a literal under 2**24: beyond that, the value 2 to 9 away may be the
    same float32 (`got != 16777217` with `got` a float32 holds for 16777216 too)."""
    body = _INT_SUFFIX.sub("", literal.replace("_", "").lower())
    try:
        value = int(body, 0) if body[:2] in ("0x", "0b", "0o") else float(_FLOAT_SUFFIX.sub("", body))
    except ValueError:
        return None
    return changed_number(literal, rng) if abs(value) < 2 ** 24 else None


def _indent(data: bytes, at: int) -> str:
    """The whitespace the line holding byte `at` starts with."""
    line = data[data.rfind(b"\n", 0, at) + 1:at].decode()
    return line[:len(line) - len(line.lstrip())]
