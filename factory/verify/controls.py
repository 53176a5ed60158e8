"""Controls: hidden tests copied with one expected value changed, run among the real ones.

Every result comes out of the process that runs the code under test, so any result can be
forged there. What that code cannot do is forge selectively without telling a control from
a real hidden test: a control is a copy of a hidden test (FAIL_TO_PASS first: the agent
never saw those), under a name made of words from the file's other tests, placed just
before or after its original in the same file and in the same order on pytest's command
line, with one expected literal changed (`mutants.py`). A correct fix passes the original
and fails the copy; a forger that turns failures into passes passes both. Nothing in the
test process names the controls: this plan stays on the host.

Where no hidden test compares with a literal, the controls invert an assertion or take a
`pytest.raises` block's body out of it, and where
no hidden test can be copied at all, a planted test that fails is the control; either way
`ControlPlan.weak` says so and the verdict carries it as a flag.
"""

from __future__ import annotations

import ast
import functools
import random
import re
import secrets
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from factory.records import Task
from factory.verify import blind, mutants, values
from factory.verify.classes import Classes
from factory.verify.mutants import Edit, Source
from factory.verify.twins import Copy, defs, write_copies

CONTROLS = 3
"""Controls at least."""
F2P_COPIES = 3
"""Copies of each FAIL_TO_PASS test (as far as it has that many distinct ones): a forger that must
guess which of a group of twins is real passes each test with odds 1/4, k tests with 4^-k. More
copies of one literal show its original as their centre (every copy is 2 to 9 away from it)."""
MAX_COPIES = 40
"""FAIL_TO_PASS copies beyond the first of each test stop here."""
MAX_TWINS = 30
"""FAIL_TO_PASS tests copied at most; any beyond are named in the weak-controls flag."""
NAME_KEYED = {
    "request", "snapshot", "data_regression", "file_regression", "num_regression", "ndarrays_regression",
    "dataframe_regression", "image_regression", "datadir", "original_datadir", "shared_datadir", "vcr",
    "vcr_cassette", "default_cassette", "benchmark", "golden", "record_property",
}
"""Fixtures and marks that may read a test's own name: a test that uses one keeps its name."""
MORE_FILES = 3
"""PASS_TO_PASS test files read, besides every FAIL_TO_PASS file, to find more originals."""
_DEF = re.compile(r"^[+\- ]\s*(?:async\s+)?def\s+(\w+)")


@dataclass(frozen=True)
class Control:
    nodeid: str
    original: str
    """The hidden test it is a copy of; '' for a planted control."""


@dataclass
class ControlPlan:
    files: dict[str, str] = field(default_factory=dict)
    """Test file -> its text with the controls in it (written as root before the run)."""
    controls: list[Control] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    """Every test to run, real and control, in the order their files define them."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Hidden test id -> the id it runs under (originals the agent could see get a new name)."""
    weak: str = ""
    """Why the controls are weaker than changed literals in unseen tests; '' when they are not."""
    told_apart: list[str] = field(default_factory=list)
    """FAIL_TO_PASS tests whose copies a forger may tell apart (`_Site.told`)."""
    blind: dict[str, list[blind.Expected]] = field(default_factory=dict)
    """Test function as it runs ('path::Class::name') -> what its blind checks expect (`blind.py`)."""
    planned: dict[str, str] = field(default_factory=dict)
    """The files as planned, before their checks went blind: each copy as a twin of its original
    with its literal changed (`files` is what runs)."""

    def statement_at(self, nodeid: str, line: int) -> int | None:
        """Which top-level statement of test `nodeid`'s body (as it ran) holds `line` of its file."""
        path, classes, name, _ = split_id(nodeid)
        tree = _parsed(self.files[path]) if path in self.files else None
        found = _find(tree, classes, name) if tree else None
        body = found[0].body if found else []
        return next((i for i, stmt in enumerate(body) if stmt.lineno <= line <= stmt.end_lineno), None)


@dataclass(eq=False)
class _Original:
    path: str
    classes: tuple[str, ...]
    fn: ast.FunctionDef | ast.AsyncFunctionDef
    scope: ast.Module | ast.ClassDef
    params: list[str]
    """Every [..] part the task asks for ('' when not parametrized): a copy is asked for with all
    of them, as its original is, so the count of its instances tells nothing."""
    f2p_params: list[str]
    """Those asked for as FAIL_TO_PASS: each needs a failing instance of the copy."""
    unseen: bool
    """The agent never saw it: its file was hidden, or the test patch adds it."""

    @property
    def mixed(self) -> bool:
        """Some instances are FAIL_TO_PASS, others PASS_TO_PASS: a copy changed in its body fails
        the latter too, while its original passes them, and is told apart by that."""
        return bool(self.f2p_params) and any(p not in self.f2p_params for p in self.params)

    def id(self, param: str) -> str:
        return "::".join([self.path, *self.classes, self.fn.name]) + (f"[{param}]" if param else "")


@functools.lru_cache(maxsize=16)
def _parsed(text: str) -> ast.Module | None:
    """A planted file parsed once, however many of its tests' failures are placed in it."""
    try:
        return mutants.parse(text)
    except SyntaxError:
        return None


def split_id(nodeid: str) -> tuple[str, tuple[str, ...], str, str]:
    """'a/t.py::C::test_x[1-2]' -> ('a/t.py', ('C',), 'test_x', '1-2')."""
    base, bracket, param = nodeid.partition("[")
    path, *scopes = base.split("::")
    return path, tuple(scopes[:-1]), scopes[-1] if scopes else "", param[:-1] if bracket and param.endswith("]") else ""


def hidden_files(task: Task, touched: list[str]) -> list[str]:
    """Test files to read for originals: every FAIL_TO_PASS file, then a few PASS_TO_PASS files (unseen first)."""
    def usable(paths: list[str]) -> list[str]:
        return [p for p in dict.fromkeys(paths) if p.endswith(".py") and p not in touched]

    unseen = _Unseen(task)
    f2p = usable([split_id(i)[0] for i in task.FAIL_TO_PASS])[:MAX_TWINS]
    p2p = [split_id(i)[0] for i in task.PASS_TO_PASS]
    more = usable([*(p for p in p2p if unseen.file(p)), *p2p])
    return f2p + [p for p in more if p not in f2p][:MORE_FILES]


class _Unseen:
    """Which tests the agent never saw: files hidden from its start state, functions the test patch adds."""

    def __init__(self, task: Task):
        self.hidden = [h.rstrip("/") for h in task.start.hide_paths]
        self.added: dict[str, set[str]] = {}
        seen: dict[str, set[str]] = {}
        path = ""
        for line in task.test_patch.splitlines():
            if line.startswith("+++ "):
                path = line[4:].strip().removeprefix("b/")
            elif line.startswith("--- ") or line.startswith("diff "):
                continue
            elif match := _DEF.match(line):
                (self.added if line[0] == "+" else seen).setdefault(path, set()).add(match.group(1))
        for path, names in seen.items():
            self.added.get(path, set()).difference_update(names)

    def file(self, path: str) -> bool:
        return any(path == h or path.startswith(h + "/") for h in self.hidden) or path in self.added

    def test(self, path: str, name: str) -> bool:
        return any(path == h or path.startswith(h + "/") for h in self.hidden) or name in self.added.get(path, ())


def plan_controls(task: Task, sources: dict[str, str], rng: random.Random, count: int = CONTROLS,
                  classes: Classes | None = None) -> ControlPlan:
    """Controls for one verification; `sources` holds the hidden test files as they are in the
    container, `classes` the repo's class tree (for raise-only tests' copies)."""
    ids = list(dict.fromkeys([*task.FAIL_TO_PASS, *task.PASS_TO_PASS]))
    parsed: dict[str, Source] = {}
    for path, text in sources.items():
        try:
            parsed[path] = Source.of(text)
        except (SyntaxError, ValueError):
            continue
    picks = _pick(_originals(task, ids, parsed), parsed, rng, count, task.fails_at, classes, task.problem_statement)
    files, made, moved = _write(picks, parsed, rng)
    if not made:
        return _planted(task, ids, rng)
    controls = [Control(_control_id(p.original, name, param), p.original.id(param))
                for p, name in made for param in p.site.params]
    companions = [_control_id(p.original, name, param) for p, name in made
                  for param in p.original.params if param not in p.site.params]
    renamed = {i: moved[base] + i[len(base):] for i in ids if (base := i.partition("[")[0]) in moved}
    run_ids = [renamed.get(i, i) for i in ids]
    told = {p.original.id(param) for p, _ in made if p.site.told for param in p.site.params}
    # an original under its own name with two copies or more: the name a word from all the others
    copies_of = Counter(p.original.id("") for p, _ in made)
    told |= {p.original.id(param) for p, _ in made if copies_of[p.original.id("")] > 1 and p.original.id("") not in moved
             for param in p.original.f2p_params}
    told_apart = [i for i in task.FAIL_TO_PASS if i in told]
    # blind: every FAIL_TO_PASS test, every test with copies and every copy (a group of twins is
    # then one code under several names where its changed literal was a blind check's)
    def base(nodeid: str) -> str:
        return renamed.get(nodeid, nodeid).partition("[")[0]

    groups: dict[str, set[str]] = {base(i): {base(i)} for i in task.FAIL_TO_PASS}
    for c in controls:
        groups.setdefault(base(c.original), {base(c.original)}).add(base(c.nodeid))
    run, checks = blind.rewrite(files, list(groups.values()))
    return ControlPlan(files=run, controls=controls, ids=_order([*run_ids, *companions], controls, files, rng),
                       renamed=renamed, weak=_weakness(task, made, controls, told_apart), told_apart=told_apart,
                       blind=checks, planned=files)


def _weakness(task: Task, made: list[tuple[_Pick, str]], controls: list[Control], weak: list[str]) -> str:
    """What a forger could get past these controls without guessing (`weak`: the told-apart tests)."""
    covered = {c.original for c in controls}
    missing = [i for i in task.FAIL_TO_PASS if i not in covered]
    why = []
    if missing:
        why.append(f"{len(missing)} of {len(task.FAIL_TO_PASS)} FAIL_TO_PASS tests have no control, e.g. {missing[0]}")
    if weak:
        why.append(f"{len(weak)} of {len(task.FAIL_TO_PASS)} FAIL_TO_PASS tests have only copies that a forger "
                   "may tell apart by running them under the unfixed code (an inverted check, an unwrapped "
                   "pytest.raises, a change before the check the bug breaks) or by reading them (None or ... "
                   "for a boolean or an empty container, a builtin error class no library raises, a value "
                   "the problem statement names or the file echoes)")
    mixed = {p.original.id("") for p, _ in made if p.original.mixed and set(p.site.params) == set(p.original.params)}
    if mixed:
        why.append(f"{len(mixed)} FAIL_TO_PASS test(s) with PASS_TO_PASS instances have copies those instances "
                   f"tell apart, e.g. {min(mixed)}")
    if any(not p.original.unseen for p, _ in made):
        why.append("controls copied from tests the agent could see")
    return "; ".join(why)


def _originals(task: Task, ids: list[str], parsed: dict[str, Source]) -> list[_Original]:
    """Hidden test functions that can be copied, one entry per function, FAIL_TO_PASS first."""
    unseen, f2p, out = _Unseen(task), set(task.FAIL_TO_PASS), {}
    for nodeid in sorted(ids, key=lambda i: i not in f2p):
        path, classes, name, param = split_id(nodeid)
        if (path, classes, name) not in out:
            found = _find(parsed[path].tree, classes, name) if path in parsed else None
            if not found:
                continue
            out[path, classes, name] = _Original(path, classes, found[0], found[1], [], [], unseen.test(path, name))
        out[path, classes, name].params.append(param)
        if nodeid in f2p:
            out[path, classes, name].f2p_params.append(param)
    return list(out.values())


def _find(tree: ast.Module, classes: tuple[str, ...], name: str):
    scope: ast.Module | ast.ClassDef = tree
    for cls in classes:
        matches = [n for n in scope.body if isinstance(n, ast.ClassDef) and n.name == cls]
        if len(matches) != 1:
            return None
        scope = matches[0]
    fns = [n for n in scope.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    return (fns[0], scope) if len(fns) == 1 else None


@dataclass
class _Site:
    """Where an original's copies differ from it, and which of their instances then fail."""

    nodes: list[ast.expr]
    """Literals to change (one, or one parametrize row per FAIL_TO_PASS instance); [] to invert an assertion."""
    params: list[str]
    group: values.Group
    """How its copies differ from it and from each other."""
    told: bool = True
    """A forger may tell the copies from their original: running them under the unfixed code (an
    inverted check the bug may break, a change before the statement it breaks), or reading them (a
    third value for a boolean or an empty container, an expected error class no library raises)."""

    @property
    def strong(self) -> bool:
        return bool(self.nodes)


@dataclass
class _Pick:
    original: _Original
    site: _Site
    edits: list[Edit]


def _pick(originals: list[_Original], parsed: dict[str, Source], rng: random.Random, count: int,
          fails_at: dict[str, int], classes: Classes | None, hint: str) -> list[_Pick]:
    """A copy of every FAIL_TO_PASS test: one without a copy would be known to be real, and free
    to forge; then more of them, up to F2P_COPIES each. Then, until there are `count` controls: copies of unseen PASS_TO_PASS tests, more
    copies of the same tests at the same site (a group of twins shows no original), tests the
    agent saw."""
    sites = {id(o): _site(o, parsed[o.path], rng, fails_at, classes, hint) for o in originals}
    usable = [o for o in rng.sample(originals, len(originals)) if sites[id(o)]]
    picks: list[_Pick] = []

    def add(o: _Original) -> None:
        done = [p.edits for p in picks if p.original is o]
        pick = _mutant(o, sites[id(o)], parsed[o.path], rng, done)
        picks.extend([pick] if pick else [])

    def short() -> bool:
        return sum(len(p.site.params) for p in picks) < count

    failing = [o for o in originals if o.f2p_params and sites[id(o)]][:MAX_TWINS]
    for o in failing:
        add(o)
    for _ in range(F2P_COPIES - 1):
        for o in failing:
            if len(picks) < MAX_COPIES:
                add(o)
    for o in [o for o in usable if not o.f2p_params and o.unseen and sites[id(o)].strong]:
        if short():
            add(o)
    for _ in range(count):
        for o in dict.fromkeys(p.original for p in picks if p.site.strong and p.original.unseen):  # identity
            if short():
                add(o)
    for o in [o for o in usable if not o.f2p_params and not o.unseen and sites[id(o)].strong]:
        if short():
            add(o)
    return picks


def _site(o: _Original, src: Source, rng: random.Random, fails_at: dict[str, int], classes: Classes | None,
          hint: str) -> _Site | None:
    """A literal in the body (every instance of the copy fails), else the parametrize row of each
    FAIL_TO_PASS instance (or of one instance), else an assertion to invert; numbers first, then
    strings, and values a reader spots (None for a boolean, an error class) last.

    A forger in the test process can run both twins under the unfixed code and compare where each
    fails. They fail alike when the copy differs at, or after, the statement the unfixed code
    fails at (`fails_at`, the top-level statement index that validation's empty-patch run saw);
    where that is not known, the last statement that has a site is the best guess."""
    seen = [fails_at[i] for p in o.f2p_params if (i := o.id(p)) in fails_at]
    hidden = blind.expected_literals(src, o.fn)
    floor = max(seen) if seen else None
    copies = max(F2P_COPIES, CONTROLS)
    # A copy that differs from its original only in a blind check catches a forger that sends
    # values, not one that silences the checks the host cannot see: those pass in every twin
    # alike. So copies go into blind checks only where the bug strikes at one (or, not knowing
    # where it strikes, where every check is blind); else they differ where it strikes, in sight.
    blind_at = {i for i, _ in hidden}
    strikes_blind = floor in blind_at if floor is not None else _checks_at(o.fn) <= blind_at

    def in_sight(sites: list[tuple[int, ast.expr]]) -> list[tuple[int, ast.expr]]:
        return sites if strikes_blind else [(i, n) for i, n in sites if not blind.covers(hidden, i, n)]

    def choose(sites: list[tuple[int, ast.expr]]) -> tuple[ast.expr, int, bool]:
        """A site in a blind check (its copies are then the original's code under another name,
        `blind.py`), else one at or after the failing statement, leaving a reader the least to go
        on (`values.trace`)."""
        unseen = [(i, leaf) for i, n in sites if blind.covers(hidden, i, leaf := mutants.leaf(n, rng))]
        if unseen:
            i, node = rng.choice(unseen)
            return node, i, False
        top = floor if floor is not None else max(i for i, _ in sites)
        late = [(i, n) for i, n in sites if i >= top]
        leaves = [(i, mutants.leaf(n, rng), rng.random()) for i, n in late or sites]
        traces = {id(n): values.trace(src, n, copies, classes, hint) for _, n, _ in leaves}
        i, node, _ = min(leaves, key=lambda c: (traces[id(c[1])], c[2]))
        return node, i, not late or traces[id(node)] == 2

    def at(chosen: list[tuple[ast.expr, int, bool]], params: list[str]) -> _Site:
        flip = floor is not None and all(i > floor for _, i, _ in chosen)
        group = values.Group(copies=copies, spot=rng.random(), flip=flip, classes=classes, hint=hint)
        return _Site([n for n, _, _ in chosen], params, group, told=any(t for _, _, t in chosen))

    every = mutants.strong_sites(o.fn, "")
    body = in_sight(every)
    rows = {p: sites for p in (o.f2p_params or [rng.choice(o.params)])
            if (sites := in_sight([s for s in mutants.strong_sites(o.fn, p) if s not in every]))}
    by_rows = at([choose(sites) for sites in rows.values()], list(rows)) if rows else None
    if by_rows and o.mixed:  # only the changed rows fail: the other instances behave as the original's
        return by_rows
    if body:
        node, index, told = choose(body)
        by_body = at([(node, index, told)], o.params)
        # its PASS_TO_PASS instances fail in the copy and pass in the original, in the process
        # unless the change is in a blind check (then only the host sees them fail)
        by_body.told |= o.mixed and not blind.covers(hidden, index, node)
        return by_rows if by_body.told and by_rows and not by_rows.told else by_body
    if by_rows:
        return by_rows
    # an inverted check or an unwrapped block: whoever knows from the issue what the check should
    # say reads which twin is right
    _, edits = mutants.weak_edits(src, o.fn)
    return _Site([], o.params, values.Group(copies=1, spot=0.0), told=True) if edits else None


def _checks_at(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """Top-level statements of a test body that check something: asserts, raises blocks, `self.assert*`."""
    def checks(stmt: ast.stmt) -> bool:
        call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
        return isinstance(stmt, ast.Assert) or mutants.raises_block(stmt) or \
            call is not None and mutants.tail(call.func).startswith("assert")
    return {i for i, stmt in enumerate(mutants.reached(fn)) if checks(stmt)}


def _mutant(o: _Original, site: _Site, src: Source, rng: random.Random, done: list[list[Edit]]) -> _Pick | None:
    for _ in range(8):
        if site.strong:
            edits = [values.mutate(src, node, rng, site.group, nth=len(done)) for node in site.nodes]
            edits = [] if None in edits else edits
        else:
            edits = mutants.weak_edits(src, o.fn)[1]
        if edits and edits not in done:
            return _Pick(o, site, edits)
    return None


def _write(picks: list[_Pick], parsed: dict[str, Source], rng: random.Random):
    """Insert each mutant next to its original, renaming the originals the agent could see; keep
    only what the parser confirms (each copy a twin of its original, each renamed original itself).

    Returns the new files, (pick, the copy's name) of each mutant kept, and the new id of each
    renamed original (by its id without parameters)."""
    files: dict[str, str] = {}
    kept: list[tuple[_Pick, str]] = []
    renamed: dict[str, str] = {}
    for path in dict.fromkeys(p.original.path for p in picks):
        src = parsed[path]
        mine = [p for p in picks if p.original.path == path]
        while mine:
            # every original that runs the same under another name gets one: a copy's name is one
            # word-edit from its original's, so among three twins the one a word from all the
            # others would be the original, were it still under its own name
            seen = [o for o in dict.fromkeys(p.original for p in mine) if renamable(o.fn, src)]
            text, names, new_names = write_copies(src, [Copy(p.original.fn, p.original.scope, p.edits) for p in mine],
                                                  rng, [o.fn for o in seen])
            made = list(zip(mine, names, strict=True))
            moved = dict(zip(seen, new_names, strict=True))
            try:
                tree = mutants.parse(text)
            except SyntaxError:
                tree = None
            bad = [p for p, name in made if tree is None or not _confirmed(tree, p, name, moved.get(p.original))]
            if not bad:
                files[path] = text
                kept += made
                renamed.update({o.id(""): _control_id(o, name, "") for o, name in moved.items()})
                break
            mine = [p for p in mine if p not in bad] if tree is not None else mine[:-1]
    return files, kept, renamed


def renamable(fn: ast.FunctionDef | ast.AsyncFunctionDef, src: Source) -> bool:
    """A test that runs the same under another name: it takes no fixture and has no mark that
    may key files by the test's name (snapshots, regression data, cassettes), and its name is
    written nowhere else in its file."""
    asked = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    asked |= {mutants.tail(n) for d in fn.decorator_list for n in ast.walk(d)}
    mentions = re.findall(rb"\b" + re.escape(fn.name.encode()) + rb"\b", src.data)
    return not asked & NAME_KEYED and len(mentions) == 1


def _confirmed(tree: ast.Module, p: _Pick, name: str, moved_to: str | None) -> bool:
    found = _find(tree, p.original.classes, name)
    if not found:
        return False
    if moved_to is not None:
        moved = _find(tree, p.original.classes, moved_to)
        if not moved or not mutants.is_twin(p.original.fn, moved[0], changes=0):
            return False
    if p.site.strong:
        return mutants.is_twin(p.original.fn, found[0], changes=len(p.edits))
    return mutants.is_inverted(p.original.fn, found[0]) or mutants.is_unwrapped(p.original.fn, found[0])


def _control_id(o: _Original, name: str, param: str) -> str:
    return "::".join([o.path, *o.classes, name]) + (f"[{param}]" if param else "")


def _order(ids: list[str], controls: list[Control], files: dict[str, str], rng: random.Random) -> list[str]:
    """Real ids and controls, each file's tests in the order the file defines them (the order pytest
    itself would run them in), files in the order the task lists them, and the instances of every
    parametrized test in one shuffled order of their parameters, the same for a copy and its
    original (in the task's order, FAIL_TO_PASS instances would come first in the original and
    last in its copy): the order tells nothing."""
    everything = [*ids, *(c.nodeid for c in controls)]
    params = sorted({nodeid.partition("[")[2] for nodeid in everything})
    index = {nodeid: i for i, nodeid in enumerate(everything)}
    shuffled = dict(zip(params, rng.sample(range(len(params)), len(params)), strict=True))
    lines: dict[str, int] = {}
    for path, text in files.items():
        for scope, node in defs(mutants.parse(text)):
            lines["::".join([path, *scope, node.name])] = node.lineno
    file_rank = {p: i for i, p in enumerate(dict.fromkeys(split_id(i)[0] for i in everything))}

    def key(nodeid: str) -> tuple[int, int, int, int]:
        base, _, param = nodeid.partition("[")
        return file_rank[split_id(nodeid)[0]], lines.get(base, 10**9), shuffled[param], index[nodeid]

    return sorted(everything, key=key)


def _planted(task: Task, ids: list[str], rng: random.Random) -> ControlPlan:
    """No hidden test could be copied: a planted test that fails, at a random place in the order."""
    if not task.FAIL_TO_PASS:
        return ControlPlan(ids=ids, weak="no hidden tests to hide a control among")
    nonce = secrets.token_hex(8)
    path = str(PurePosixPath(split_id(task.FAIL_TO_PASS[0])[0]).parent / f"test_{nonce[:6]}_{nonce[6:]}.py")
    control = Control(f"{path}::test_{nonce}", "")
    order = list(ids)
    order.insert(rng.randint(0, len(order)), control.nodeid)
    return ControlPlan(files={path: f"def test_{nonce}():\n    assert False\n"}, controls=[control], ids=order,
                       weak="no hidden test could be copied: a planted control in a file of its own")
