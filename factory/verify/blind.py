"""Blind checks: expected values that never enter the test process.

A hidden test's `assert f(x) == 10` is decided inside the process that runs the code under
test, and the `10` is in a file that process can read: a forger that reads it (or reads the
problem statement that names it) knows what to spare. So in every FAIL_TO_PASS test, every
copied test and every copy, the top-level checks against literals are rewritten before the run:

    assert f(x) == 10              ->   assert __factory_seen__(0, "eq", (f(x)))
    self.assertEqual(r, {"a": 1})  ->   assert __factory_seen__(1, "eq", (r), "dict")
    assert r is None               ->   assert __factory_seen__(2, "is", (r))
    assert f(t) == expected        ->   assert __factory_seen__(3, "eq", (f(t)))  # each row's value: None
    with pytest.raises(E, match=p) ->   with __factory_raises__(4):

The plugin's functions send the value (or what the block raised) as plain data on the report
pipe and let the test go on; the expected value stays on the host, which compares (`judge`).
A copy whose changed literal sat in such a check is then the same code as its original, under
another name: nothing in the process tells the two apart, reading or running them.

The plugin is in reach of the code under test, so what it sends may be forged; but a forger
that sends values must send the right ones, which it can only know by computing them (a fix)
or from the task's text (and then it could hard-code them in a fix too: no test can tell).
A value that is not plain data, nor equal to plain data it projects to (a subclass, a numpy
scalar, an object equal to its own `str()`), cannot be compared outside the process: that
check fails, naming the type. The call names the expected value's kind (never the value) so
that such a projection can aim at it.

Only statements that run whenever the test passes (`mutants.reached`) are rewritten, so a
passed test must have sent every one of its checks; the line count of each statement is kept,
so lines and statement numbers mean what they did. A check is blind in an original and its
copies alike, or in none of them.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass
from typing import Any

from factory.verify import mutants
from factory.verify.classes import Classes
from factory.verify.mutants import Edit, Source
from factory.verify.twins import defs

SEEN = "__factory_seen__"
"""The plugin's function, put in builtins: no import line in the rewritten file."""
RAISES = "__factory_raises__"
"""The plugin's stand-in for `pytest.raises(E, match=...)`: it catches whatever is raised and sends it."""


@dataclass(frozen=True)
class Expected:
    statement: int
    """Index of the top-level statement of the test body it replaced."""
    line: int
    how: str
    """'eq' (`==`), 'is' (identity with None, True or False) or 'raises' (value: the class's
    expression as the test writes it, `InvalidRange` or `errors.ParseError`, and the `match=`
    pattern or None)."""
    value: Any = None
    rows: dict[str, Any] | None = None
    """For `assert f(x) == expected` with `expected` a parametrize argument: row id -> its value."""

    def of(self, param: str) -> Any:
        return self.value if self.rows is None else self.rows[param]


@dataclass
class _Check:
    index: int
    stmt: ast.stmt
    other: ast.expr
    how: str
    literals: list[ast.expr]
    """The expected literal, or that argument's value in every parametrize row (each blanked)."""
    rows: list[str] | None = None
    """The rows' ids, in the order of `literals`, for a parametrize argument."""


def _checks(fn: ast.FunctionDef | ast.AsyncFunctionDef, file_marks: bool, names: dict[str, str]) -> list[_Check]:
    """Each blindable check of a test (`file_marks`: its file may parametrize it from outside;
    `names`: what the file's imports bind, `Source.bound`)."""
    if any("xfail" in ast.unparse(d) for d in fn.decorator_list):
        return []  # a check that no longer raises would turn xfailed into xpassed
    rows = [] if file_marks else mutants.parametrize_rows(fn)
    out = []
    for index, stmt in enumerate(mutants.reached(fn)):
        if (raised := _raises(stmt, names)) is not None:
            out.append(_Check(index, stmt, stmt.items[0].context_expr, "raises", raised))
            continue
        for expected, other, how in mutants.comparisons(stmt):
            if _plain_literal(other):
                continue
            if _plain_literal(expected) and (how == "eq" or _identity(expected)):
                out.append(_Check(index, stmt, other, how, [expected]))
                break
            if isinstance(expected, ast.Name) and (column := _column(fn, rows, expected.id, how)):
                out.append(_Check(index, stmt, other, how, column, [r.id for r in rows]))
                break
    return out


def _raises(stmt: ast.stmt, names: dict[str, str]) -> list[ast.expr] | None:
    """[class] or [class, match] of `with pytest.raises(E[, match='...']):` (or
    `self.assertRaises(E)`) with nothing bound by `as`, E one class whose own name is known
    (a builtin, a class of the file, an import, `module.Class`); else None."""
    if not mutants.raises_block(stmt) or stmt.items[0].optional_vars is not None:
        return None
    call = stmt.items[0].context_expr
    keywords = {k.arg: k.value for k in call.keywords}
    if len(call.args) != 1 or set(keywords) - {"match"} or _class_name(call.args[0], names) is None:
        return None
    match = keywords.get("match")
    if match is not None and not (isinstance(match, ast.Constant) and isinstance(match.value, str)):
        return None
    return [call.args[0], *([match] if match is not None else [])]


def _class_name(node: ast.expr, names: dict[str, str]) -> str | None:
    """The name a class expression's class has (`__qualname__`'s last part), where the file says:
    `module.Class` with the module imported at the top (not `self.error_class`)."""
    if isinstance(node, ast.Attribute):
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        return node.attr if isinstance(root, ast.Name) and root.id in names else None
    if isinstance(node, ast.Name):
        builtin = getattr(builtins, node.id, None)
        if node.id in names:
            return names[node.id]
        if isinstance(builtin, type) and issubclass(builtin, BaseException):
            return node.id
    return None


def _column(fn: ast.FunctionDef | ast.AsyncFunctionDef, rows: list[mutants.Row], name: str, how: str) -> list[ast.expr]:
    """The value of argument `name` in every row, when each is a plain literal, each row's id is
    written out (blanking the value leaves the ids as they are) and the test reads `name` only
    in this comparison; else []."""
    column = [r.values.get(name) for r in rows]
    if not rows or not all(r.named for r in rows) or not mutants.used_once(fn, name):
        return []
    good = all(v is not None and _plain_literal(v) and (how == "eq" or _identity(v)) for v in column)
    return column if good else []


def _identity(node: ast.expr) -> bool:
    """What `is` may check against: None, True, False, and the `...` a copy expects instead."""
    return isinstance(node, ast.Constant) and any(node.value is v for v in (None, True, False, ...))


def _plain_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def expected_literals(src: Source, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[int, ast.expr]]:
    """(statement index, literal) of every expected value of `fn` that will be blind, in its body,
    a parametrize row or a raises block: a copy that changes one differs from its original only on the host."""
    return [(c.index, lit) for c in _checks(fn, src.marked_from_outside, src.bound) for lit in c.literals]


def covers(literals: list[tuple[int, ast.expr]], index: int, node: ast.expr) -> bool:
    """Whether `node`, in top-level statement `index`, is inside one of `expected_literals`."""
    return any(i == index and _inside(node, lit) for i, lit in literals)


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) \
        and (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)


def rewrite(files: dict[str, str], groups: list[set[str]]) -> tuple[dict[str, str], dict[str, list[Expected]]]:
    """`files` with the checks of the functions named in `groups` ('path::Class::name') made
    blind, and what each such function's checks expect, in the order it sends them.

    A group is an original and its copies: a check is blind in all of them or in none (a copy
    whose changed class or value could not be blind would show beside a blind original)."""
    parsed: dict[str, tuple[Source, dict[str, str]]] = {}
    found: dict[str, tuple[str, list[_Check]]] = {}
    for path, text in files.items():
        try:
            src = Source(text)
        except (SyntaxError, ValueError):
            continue
        parsed[path] = src, src.bound
        for scope, fn in defs(src.tree):
            found["::".join([path, *scope, fn.name])] = path, _checks(fn, src.marked_from_outside, src.bound)
    edits: dict[str, list[Edit]] = {}
    expected: dict[str, list[Expected]] = {}
    for group in groups:
        members = [m for m in group if m in found]
        shared = set.intersection(*({(c.index, c.how) for c in found[m][1]} for m in members)) if members else set()
        for member in members:
            path, checks = found[member]
            src, names = parsed[path]
            kept = [c for c in checks if (c.index, c.how) in shared]
            if kept:
                expected[member] = [_blind(src, names, number, c, edits.setdefault(path, []))
                                    for number, c in enumerate(kept)]
    out = dict(files)
    for path, changes in edits.items():
        data = parsed[path][0].data
        for e in sorted(changes, key=lambda e: e.start, reverse=True):
            data = data[:e.start] + e.text.encode() + data[e.end:]
        out[path] = data.decode()
    return out, expected


def _blind(src: Source, names: dict[str, str], number: int, c: _Check, edits: list[Edit]) -> Expected:
    """Add the edits that make check `c` blind as check `number`; what it expects."""
    if c.how == "raises":
        edits.append(_blanked(src, c.other, f"{RAISES}({number}", ")"))
        pattern = ast.literal_eval(c.literals[1]) if len(c.literals) > 1 else None
        return Expected(c.index, c.stmt.lineno, c.how, (ast.unparse(c.literals[0]), pattern))
    values = [ast.literal_eval(lit) for lit in c.literals]
    # the expected value's kind (a list, a str: never its value) lets an object that equals its
    # projection to that kind be sent as it; the same in every twin, as copies keep the kind
    kinds = {type(v).__name__ for v in values}
    kind = f', "{kinds.pop()}"' if len(kinds) == 1 and kinds <= {"list", "tuple", "dict", "set", "str"} else ""
    shown = src.text(*src.span(c.other))
    edits.append(_blanked(src, c.stmt, f'assert {SEEN}({number}, "{c.how}", ({shown}', f"){kind})"))
    if c.rows is None:
        return Expected(c.index, c.stmt.lineno, c.how, values[0])
    edits.extend(_blanked(src, lit, "None") for lit in c.literals)
    return Expected(c.index, c.stmt.lineno, c.how, rows=dict(zip(c.rows, values, strict=True)))


def _blanked(src: Source, node: ast.AST, head: str, tail: str = "") -> Edit:
    """Replace `node` with `head` + `tail`, with newlines between them to keep its line count."""
    start, end = src.span(node)
    pad = "\n" * (node.end_lineno - node.lineno - head.count("\n"))
    return Edit(start, end, f"{head}{pad}{tail}")


# ---------------------------------------------------------------- on the host, after the run


class _Opaque(Exception):
    pass


def decode(value: Any) -> Any:
    """A value as the plugin's `_plain` encodes it, back in Python; `_Opaque` for anything else."""
    if not isinstance(value, list) or not value or not isinstance(value[0], str):
        raise _Opaque("not an encoded value")
    tag, rest = value[0], value[1:]
    scalars = {"none": lambda: None, "bool": lambda: bool(rest[0]), "int": lambda: int(rest[0]),
               "float": lambda: float(rest[0]), "complex": lambda: complex(float(rest[0]), float(rest[1])),
               "str": lambda: str(rest[0]), "bytes": lambda: bytes.fromhex(rest[0])}
    containers = {"list": list, "tuple": tuple, "set": set}
    try:
        if tag in scalars:
            if tag in ("bool", "int") and type(rest[0]) not in (bool, int) or tag == "str" and type(rest[0]) is not str:
                raise _Opaque(f"a {tag} that is not one")
            return scalars[tag]()
        if tag in containers:
            return containers[tag](decode(v) for v in rest[0])
        if tag == "dict":
            return {decode(k): decode(v) for k, v in rest[0]}
    except (IndexError, TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise _Opaque(f"a malformed {tag}") from exc
    raise _Opaque("a " + (str(rest[0])[:80] if tag == "opaque" and rest else "value of no known kind"))


def judge(sent: dict[int, list[Any]], checks: list[Expected], param: str = "",
          classes: Classes | None = None) -> tuple[int, str] | None:
    """Why a test that pytest reported passed fails its blind checks (the statement, the reason),
    or None when it sent every check and each value is the expected one. `sent`: check number ->
    the values sent for it (a check sends once per run of the body; all must match); `param`:
    the test id's [..] part; `classes`: the repo's class tree, which a raised class must not
    contradict (`_raised_as_expected`)."""
    for number, check in enumerate(checks):
        values = sent.get(number, [])
        if not values:
            return check.statement, f"its check at line {check.line} never reported a value"
        if check.rows is not None and param not in check.rows:
            return check.statement, f"its check at line {check.line} has no expected value for [{param}]"
        for value in values:
            if not _matches(value, check.how, check.of(param), classes):
                return check.statement, f"its check at line {check.line} got {_shown(value)}, not the expected value"
    return None


def _matches(value: Any, how: str, expected: Any, classes: Classes | None) -> bool:
    if how == "raises":
        return _raised_as_expected(value, *expected, classes)
    try:
        got = decode(value)
    except _Opaque:
        return False
    if how == "is":
        return got is expected
    try:
        return bool(got == expected)
    except (TypeError, ValueError, RecursionError):
        return False


def _raised_as_expected(value: Any, expression: str, pattern: str | None, classes: Classes | None = None) -> bool:
    """`pytest.raises(E, match=pattern)`'s judgement on what the block raised: ["raised", the class's
    MRO as [module, qualname, found where it says], str(exception), [[expression, MRO index], ...]
    for each expression over the test module's names whose class it derives from], or ["not raised"].

    E is judged by identity, as pytest does (`issubclass` against the object the test's name is
    bound to, which the plugin works out in the process): a class merely named like E (made by
    `type()`, defined again elsewhere, with a lying `__qualname__`, a builtin's look-alike) is not
    E. What the host checks itself: the base that matched is found at the module and qualified
    name it gives, or the repo's tree declares no class of that name (a class made at run time,
    a library's, with a metaclass deciding `issubclass`)."""
    if not (isinstance(value, list) and len(value) == 4 and value[0] == "raised" and isinstance(value[1], list)
            and isinstance(value[2], str) and isinstance(value[3], list)):
        return False
    mro = value[1]
    matched = [i for e in value[3] if isinstance(e, list) and len(e) == 2 and e[0] == expression
               and type(i := e[1]) is int and -1 <= i < len(mro)]
    if not matched or not (pattern is None or re.search(pattern, value[2]) is not None):
        return False
    i = matched[0]
    if i == -1:
        return True
    entry = mro[i]
    if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[1], str)):
        return False
    return entry[2] is True or classes is None or entry[1].rpartition(".")[2] not in classes.bases


def _shown(value: Any) -> str:
    if isinstance(value, list) and value[:1] == ["raised"] and len(value) >= 3:
        return f"{str(value[1][0][1] if value[1] and isinstance(value[1][0], list) else '?')[:80]}({str(value[2])[:80]!r})"
    if value == ["not raised"]:
        return "nothing raised"
    try:
        return repr(decode(value))[:120]
    except _Opaque as exc:
        return str(exc)
