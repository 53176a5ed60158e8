"""Mutants of a hidden test: the same test with one expected value changed.

A test that passes under a correct fix compares a value with an expected literal in a
top-level statement of its body (`assert x == 3`, `self.assertEqual(x, "a")`, or a
`parametrize` row that feeds the expected name). With that one literal changed, the copy
fails with an AssertionError under any correct fix: the statement is always reached (no
`return` or `yield` before it) and a value equal to 3 is not equal to 5. The change is a
text edit, so the copy keeps its original's formatting, comments and decorators; `is_twin`
checks on the parsed result that nothing else differs.

A test that only checks that something raises has its exception class changed instead
(`pytest.raises(ParseError)` to `pytest.raises(ScanError)`): under any correct fix the body
raises the original's class, which the copy does not expect. Which new value a copy gets, so
that no twin stands out to a reader, is `values.py`'s business.

Which statement changes matters to a forger that runs the tests itself (`controls.py`):
each site comes with the index of the top-level statement it is checked in.

When no test has such a site, `weak_edits` inverts an assertion instead (`==` to `!=`,
`assert x` to `assert not (x)`), or takes the body of a `pytest.raises` block out of it:
sound as well, but where the inverted check is the one the bug breaks, the copy passes
under the unfixed code while its original fails, so the verdict says the controls are weak.
"""

from __future__ import annotations

import ast
import builtins
import functools
import random
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass

_BUILDING_AST = threading.Lock()


def parse(text: str) -> ast.Module:
    """`ast.parse`, one thread at a time. CPython 3.11 counts the depth of its AST constructor
    per interpreter, not per thread: a garbage collection in the middle of one thread's parse can
    run Python code (a finalizer) that hands the GIL to another thread's parse, and then both
    fail with "SystemError: AST constructor recursion depth mismatch". Planning runs in threads."""
    with _BUILDING_AST:
        return ast.parse(text)


def literal(text: str) -> object:
    """`ast.literal_eval` of source text (a parse too, so under the same lock as `parse`)."""
    with _BUILDING_AST:
        return ast.literal_eval(text)


SCALARS = (bool, int, float, str, bytes, type(None))
EQUAL_CALLS = {"assertEqual", "assertEquals"}
REGEX_CALLS = {"assertRaisesRegex", "assertRaisesRegexp", "assertWarnsRegex"}
_REGEX = set(".^$*+?{}[]\\|()")
OP_FLIPS = {ast.Eq: "!=", ast.NotEq: "==", ast.In: "not in", ast.NotIn: "in", ast.Is: "is not", ast.IsNot: "is"}
_OP_TEXT_OF = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
CALL_FLIPS = {
    "assertTrue": "assertFalse", "assertFalse": "assertTrue", "assertEqual": "assertNotEqual",
    "assertNotEqual": "assertEqual", "assertIn": "assertNotIn", "assertNotIn": "assertIn",
    "assertIsNone": "assertIsNotNone", "assertIsNotNone": "assertIsNone", "assertIs": "assertIsNot",
    "assertIsNot": "assertIs",
}
_OP_TEXT = re.compile(r"([\s()\\]*)(==|!=|not\s+in|in|is\s+not|is)([\s()\\]*)")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
OTHER_ERRORS = ("RecursionError", "ZeroDivisionError", "FloatingPointError", "UnboundLocalError", "EOFError",
                "ChildProcessError", "ProcessLookupError", "IsADirectoryError", "NotADirectoryError")
"""Builtin exceptions a copy of a raise-only test may expect instead: leaves of the builtin tree
that libraries do not derive their own errors from, so no correct fix raises one of them where
the original expects its class."""


@dataclass(frozen=True)
class Edit:
    """Replace bytes [start, end) of the file with `text`."""

    start: int
    end: int
    text: str


class Source:
    """A parsed file with byte offsets for its nodes (ast columns count UTF-8 bytes)."""

    def __init__(self, text: str):
        self.tree = parse(text)
        self.data = text.encode()
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def at(self, lineno: int, col: int = 0) -> int:
        return self.starts[lineno - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.at(node.lineno, node.col_offset), self.at(node.end_lineno, node.end_col_offset)

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode()

    # facts of the whole file, each one walk of it per parse: worked out per test, they made
    # planning a file of many tests quadratic

    @staticmethod
    @functools.lru_cache(maxsize=32)
    def of(text: str) -> Source:
        """The parse of `text`, shared: every verification of a task plans its controls in the
        same hidden test files, so each is parsed (and its facts below worked out) once, not at
        every verification. Shared read-only: nothing changes a Source or its tree once made."""
        return Source(text)

    @functools.cached_property
    def bound(self) -> dict[str, str]:
        """Name bound at the top of the file -> the name of what it binds: `from m import A as B`
        binds B to A, `import m` binds m; a class statement binds its own name. Names bound
        otherwise are not known."""
        bound: dict[str, str] = {}
        for node in self.tree.body:
            if isinstance(node, ast.ImportFrom):
                bound.update({a.asname or a.name: a.name for a in node.names if a.name != "*"})
            elif isinstance(node, ast.Import):
                bound.update({a.asname or a.name.split(".")[0]: a.name for a in node.names})
            elif isinstance(node, ast.ClassDef):
                bound[node.name] = node.name
        assigned = {n.id for node in ast.walk(self.tree) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    for n in ast.walk(t) if isinstance(n, ast.Name)}
        return {k: v for k, v in bound.items() if k not in assigned}

    @functools.cached_property
    def marked_from_outside(self) -> bool:
        """A class or module mark may add to its tests' ids: their rows are then not known by their ids."""
        return b"pytestmark" in self.data or any(isinstance(n, ast.ClassDef) and n.decorator_list
                                                  for n in ast.walk(self.tree))

    @functools.cached_property
    def named(self) -> set[str]:
        """Every name the file uses, imports from a module or gives a class (one walk per parse)."""
        names: set[str] = set()
        for n in ast.walk(self.tree):
            if isinstance(n, ast.Name):
                names.add(n.id)
            elif isinstance(n, ast.ImportFrom):
                names.update(a.asname or a.name for a in n.names)
            elif isinstance(n, ast.ClassDef):
                names.add(n.name)
        return names


# ---------------------------------------------------------------- where a mutation may go


def _shallow(nodes: list[ast.AST]) -> Iterator[ast.AST]:
    """Every node under `nodes`, not descending into nested functions, lambdas or classes."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, _SCOPES))


@functools.lru_cache(maxsize=4096)
def reached(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[ast.stmt, ...]:
    """Top-level statements of a test body that run whenever the test passes. Kept per function
    (by identity: trees are shared, `Source.of`): the planner asks for each function's many times."""
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _shallow(fn.body)):
        return ()
    out: list[ast.stmt] = []
    for stmt in fn.body:
        out.append(stmt)
        if any(isinstance(n, ast.Return) for n in _shallow([stmt])):
            break
    return tuple(out)


def _literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) in SCALARS
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_literal(e) for e in node.elts)
    return False


def singleton(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in (None, True, False) and type(node.value) in (bool, type(None))


def empty(node: ast.AST) -> bool:
    """`[]`, `()` or `{}`: the copy expects one `None` (or `...`) in it, which no correct fix
    gives where the original expects nothing, and which no bug that gives something else matches."""
    return isinstance(node, (ast.List, ast.Tuple)) and not node.elts or isinstance(node, ast.Dict) and not node.keys


def odd(node: ast.AST) -> bool:
    """A site whose copy stands out to a reader (`None` for a boolean, a `None` in an empty list):
    chosen only where nothing else is."""
    return singleton(node) or empty(node)


THIRD_VALUES = ("None", "...")
"""What a copy expects where its original expects a boolean or an empty container (`[None]`, ...)."""
FILLED = {ast.List: "[{}]", ast.Tuple: "({},)", ast.Dict: "{{{}: None}}"}


def _self_call(stmt: ast.stmt, names: set[str] | dict[str, str]) -> ast.Call | None:
    """`self.<one of names>(...)` as a statement, positional arguments only."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in names
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"
            and not any(isinstance(a, ast.Starred) for a in call.args)):
        return call
    return None


def comparisons(stmt: ast.stmt) -> Iterator[tuple[ast.expr, ast.expr, str]]:
    """(expected side, other side, 'eq' or 'is') of an equality this statement asserts."""
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1:
        kind = {ast.Eq: "eq", ast.Is: "is"}.get(type(stmt.test.ops[0]))
        if kind:
            left, right = stmt.test.left, stmt.test.comparators[0]
            yield right, left, kind
            yield left, right, kind
    call = _self_call(stmt, EQUAL_CALLS)
    if call is not None and len(call.args) >= 2:
        yield call.args[1], call.args[0], "eq"
        yield call.args[0], call.args[1], "eq"


def _patterns(stmt: ast.stmt) -> Iterator[ast.expr]:
    """Plain-text `match=` of a top-level `pytest.raises`/`warns` (or unittest's `assertRaisesRegex`):
    with no regex syntax in it, one letter changed cannot match the message the original matched."""
    calls = [item.context_expr for item in stmt.items] if isinstance(stmt, (ast.With, ast.AsyncWith)) else []
    calls += [stmt.value] if isinstance(stmt, ast.Expr) else []
    for call in calls:
        if not isinstance(call, ast.Call):
            continue
        if tail(call.func) in ("raises", "warns"):
            pattern = next((k.value for k in call.keywords if k.arg == "match"), None)
        elif tail(call.func) in REGEX_CALLS and len(call.args) >= 2:
            pattern = call.args[1]
        else:
            continue
        text = _string(pattern) if pattern is not None else None
        if text and not _REGEX & set(text) and any(c.isascii() and c.isalnum() for c in text):
            yield pattern


def strong_sites(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> list[tuple[int, ast.expr]]:
    """(index of the top-level statement, literal) whose change fails the test under a correct
    fix (`param`: the id's [..] part): expected values, plain-text patterns, expected exception
    classes."""
    rows = parametrize_row(fn, param)
    sites: list[tuple[int, ast.expr]] = []
    for index, stmt in enumerate(reached(fn)):
        sites.extend((index, node) for node in [*_patterns(stmt), *_raised_types(stmt)])
        for side, other, kind in comparisons(stmt):
            if _literal(other):
                continue
            if kind == "eq" and (_literal(side) or empty(side)) or kind == "is" and singleton(side):
                sites.append((index, side))
            elif isinstance(side, ast.Name) and side.id in rows and used_once(fn, side.id):
                row = rows[side.id]
                if kind == "eq" and _literal(row) or kind == "is" and singleton(row):
                    sites.append((index, row))
    return sites


def _raised_types(stmt: ast.stmt) -> Iterator[ast.expr]:
    """The expected class of a top-level `with pytest.raises(E):` or `self.assertRaises(E)`, where
    E is one class by name and not the root of a tree that any error could fall under."""
    if raises_block(stmt):
        call = stmt.items[0].context_expr
        if call.args and isinstance(call.args[0], (ast.Name, ast.Attribute)) and other_errors(tail(call.args[0])):
            yield call.args[0]


def other_errors(name: str) -> list[str]:
    """Classes of OTHER_ERRORS that a copy may expect where its original expects `name`: for a
    builtin, none that it falls under or that falls under it (`Exception` has none)."""
    builtin = getattr(builtins, name, None)
    if not (isinstance(builtin, type) and issubclass(builtin, BaseException)):
        return list(OTHER_ERRORS)
    return [o for o in OTHER_ERRORS if not issubclass(getattr(builtins, o), builtin) and not issubclass(builtin, getattr(builtins, o))]


def used_once(fn: ast.AST, name: str) -> bool:
    """The parameter feeds only the comparison: never rebound, read nowhere else."""
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name]
    return len(uses) == 1 and isinstance(uses[0].ctx, ast.Load)


@dataclass(frozen=True)
class Row:
    """One row of a test's parametrize mark."""

    id: str | None
    """pytest's id for it; None where it is not certain."""
    named: bool
    """The id is written out (`pytest.param(..., id=)`, `ids=[...]`), not made from the values."""
    values: dict[str, ast.expr]
    """argname -> value node; {} when unsure."""


def parametrize_rows(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Row]:
    """Every row of the test's one parametrize mark; [] when it has none, several, or is unsure."""
    marks = [d for d in fn.decorator_list if isinstance(d, ast.Call) and tail(d.func) == "parametrize"]
    if len(marks) != 1:
        return []
    call = marks[0]
    kwargs = {k.arg: k.value for k in call.keywords}
    names = _argnames(call.args[0] if call.args else kwargs.get("argnames"))
    values = call.args[1] if len(call.args) > 1 else kwargs.get("argvalues")
    given = kwargs.get("ids")
    if "indirect" in kwargs or not names or not isinstance(values, (ast.List, ast.Tuple)):
        return []
    if given is not None and not (isinstance(given, (ast.List, ast.Tuple)) and len(given.elts) == len(values.elts)):
        return []
    rows = []
    for i, row in enumerate(values.elts):
        rid, vals = None, None
        if isinstance(row, ast.Call) and tail(row.func) == "param":
            vals = list(row.args)
            rid = next((_string(k.value) for k in row.keywords if k.arg == "id"), None)
        elif len(names) == 1:
            vals = [row]
        elif isinstance(row, (ast.Tuple, ast.List)):
            vals = list(row.elts)
        if rid is None and given is not None:
            rid = _string(given.elts[i])
        named = rid is not None
        by_name = dict(zip(names, vals, strict=True)) if vals is not None and len(vals) == len(names) else {}
        rows.append(Row(rid if named else _auto_id(vals), named, by_name))
    return rows


def parametrize_row(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> dict[str, ast.expr]:
    """argname -> value node of the one parametrize row whose id is `param`; {} when unsure."""
    rows = parametrize_rows(fn) if param else []
    ids = [r.id for r in rows]
    if None in ids or ids.count(param) != 1:
        return {}
    return rows[ids.index(param)].values


def tail(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _argnames(node: ast.AST | None) -> list[str]:
    text = _string(node) if node is not None else None
    if text is not None:
        return [n.strip() for n in text.split(",") if n.strip()]
    if isinstance(node, (ast.List, ast.Tuple)) and all(_string(e) for e in node.elts):
        return [_string(e) for e in node.elts]
    return []


def _auto_id(vals: list[ast.expr] | None) -> str | None:
    """pytest's own id for a row of plain values; None where it is not certain."""
    if not vals:
        return None
    parts = []
    for v in vals:
        if not isinstance(v, ast.Constant) or type(v.value) not in (str, int, bool, type(None)):
            return None
        if isinstance(v.value, str) and not (v.value and v.value.isascii() and v.value.isprintable()):
            return None
        parts.append(str(v.value))
    return "-".join(parts)


# ---------------------------------------------------------------- the mutation itself


def leaf(node: ast.expr, rng: random.Random) -> ast.expr:
    """One scalar of a literal: an element of a tuple or list (not True/False/None where others exist)."""
    while isinstance(node, (ast.Tuple, ast.List)) and node.elts:
        plain = [e for e in node.elts if not singleton(e)]
        node = rng.choice(plain or node.elts)
    return node


def weak_edits(src: Source, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, list[Edit]]:
    """Invert a reached top-level assertion, or unwrap a `pytest.raises` block, in the last
    statement that has one (where a bug breaks an earlier check, the copy fails there as its
    original does): (the statement's index, the edits), or (-1, []) when there is none."""
    options: list[tuple[int, list[Edit]]] = []
    for index, stmt in enumerate(reached(fn)):
        if (edits := _unwrap(src, stmt)) is not None:
            options.append((index, edits))
        elif isinstance(stmt, ast.Assert):
            test = stmt.test
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in OP_FLIPS:
                start, end = src.span(test.left)[1], src.span(test.comparators[0])[0]
                found = _OP_TEXT.fullmatch(src.text(start, end))
                if found:
                    options.append((index, [Edit(start + len(found.group(1).encode()),
                                                 end - len(found.group(3).encode()), OP_FLIPS[type(test.ops[0])])]))
                    continue
            start, end = src.span(test)
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                options.append((index, [Edit(start, src.span(test.operand)[0], "")]))  # assert not x -> assert x
            elif isinstance(test, (ast.Call, ast.Name, ast.Attribute, ast.Subscript)):
                options.append((index, [Edit(start, start, "not ")]))
            else:
                options.append((index, [Edit(start, start, "not ("), Edit(end, end, ")")]))
        elif (call := _self_call(stmt, CALL_FLIPS)) is not None:
            end = src.span(call.func)[1]
            options.append((index, [Edit(end - len(call.func.attr), end, CALL_FLIPS[call.func.attr])]))
    return options[-1] if options else (-1, [])


def raises_block(stmt: ast.stmt) -> bool:
    """`with pytest.raises(E):` (or `self.assertRaises(E)`) as the only context manager."""
    return (isinstance(stmt, ast.With) and len(stmt.items) == 1 and isinstance(stmt.items[0].context_expr, ast.Call)
            and tail(stmt.items[0].context_expr.func) in ("raises", "assertRaises"))


def _unwrap(src: Source, stmt: ast.stmt) -> list[Edit] | None:
    """The body of a top-level raises block without the block around it, dedented in place.

    Sound for any test, even one with nothing else to change: the original passes only if its
    block raised, and then the same statements, bare, raise out of the copy. Comments and
    formatting of the body stay; a body line that cannot be dedented as text (inside a string
    spanning lines) leaves it to `is_unwrapped` to refuse the copy."""
    if not raises_block(stmt):
        return None
    item = stmt.items[0]
    header_end = (item.optional_vars or item.context_expr).end_lineno  # the colon's line
    if header_end >= stmt.body[0].lineno:
        return None
    outer, inner = stmt.col_offset, stmt.body[0].col_offset
    edits = [Edit(src.at(stmt.lineno), src.at(header_end + 1), "")]
    for lineno in range(header_end + 1, stmt.end_lineno + 1):
        line = src.data[src.at(lineno):src.at(lineno + 1)]
        if line[:inner].strip(b" \t") == b"" and len(line) > inner:
            edits.append(Edit(src.at(lineno) + outer, src.at(lineno) + inner, ""))
    return edits


def _dumps(nodes: list[ast.AST]) -> list[str]:
    return [ast.dump(n) for n in nodes]


def _same_signature(a: ast.FunctionDef | ast.AsyncFunctionDef, b: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return _dumps([a.args, *a.decorator_list]) == _dumps([b.args, *b.decorator_list])


def is_unwrapped(original: ast.FunctionDef | ast.AsyncFunctionDef, copy: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`copy` is `original` but for its name and one top-level raises block replaced by its body."""
    body = original.body
    return _same_signature(original, copy) and any(
        raises_block(stmt) and _dumps([*body[:i], *stmt.body, *body[i + 1:]]) == _dumps(copy.body)
        for i, stmt in enumerate(body))


def is_inverted(original: ast.FunctionDef | ast.AsyncFunctionDef, copy: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`copy` is `original` but for its name and one top-level assertion inverted as `weak_edits` does."""
    if not _same_signature(original, copy) or len(original.body) != len(copy.body):
        return False
    changed = [(a, b) for a, b in zip(original.body, copy.body, strict=True) if ast.dump(a) != ast.dump(b)]
    if len(changed) != 1:
        return False
    a, b = changed[0]
    if isinstance(a, ast.Assert) and isinstance(b, ast.Assert):
        x, y = a.test, b.test
        if isinstance(x, ast.Compare) and isinstance(y, ast.Compare) and len(x.ops) == len(y.ops) == 1:
            return (OP_FLIPS.get(type(x.ops[0])) == _OP_TEXT_OF.get(type(y.ops[0]))
                    and _dumps([x.left, *x.comparators]) == _dumps([y.left, *y.comparators]))
        return any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) and ast.dump(n.operand) == ast.dump(m)
                   for n, m in ((y, x), (x, y)))
    calls = _self_call(a, CALL_FLIPS), _self_call(b, CALL_FLIPS)
    return (None not in calls and CALL_FLIPS[calls[0].func.attr] == calls[1].func.attr
            and _dumps([*calls[0].args, *calls[0].keywords]) == _dumps([*calls[1].args, *calls[1].keywords]))


def is_twin(original: ast.AST, copy: ast.AST, changes: int = 1) -> bool:
    """`copy` is `original` but for the function's name and the values of `changes` constants."""
    return _differences(original, copy, top=True) == changes


def _differences(a: object, b: object, top: bool = False) -> int | None:
    if isinstance(b, ast.Name) and isinstance(a, (ast.Name, ast.Attribute)) and ast.dump(a) != ast.dump(b):
        return 1  # an expected error class, changed
    if empty(a) and isinstance(b, type(a)) and not empty(b):
        return 1 if ast.unparse(b) in {FILLED[type(a)].format(v) for v in THIRD_VALUES} else None
    if type(a) is not type(b):
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return None
        counts = [_differences(x, y) for x, y in zip(a, b, strict=True)]
        return None if None in counts else sum(counts)
    if not isinstance(a, ast.AST):
        return 0 if a == b else None
    total = 0
    for key, value in ast.iter_fields(a):
        other = getattr(b, key, None)
        if top and key == "name":
            continue
        if isinstance(a, ast.Constant) and key == "value":
            total += 0 if (type(value), value) == (type(other), other) else 1
            continue
        if key == "kind" and isinstance(a, ast.Constant):
            continue
        count = _differences(value, other)
        if count is None:
            return None
        total += count
    return total
