"""Copies of Go tests: a top-level `func TestX(t *testing.T)` of a `_test.go` file, copied whole.

Go's `!=`, `reflect.DeepEqual` and testify's `Equal` are exact, so an expected literal changed
at a check that is surely reached fails under any correct fix. A check is reached when it is a
top-level statement of the test (or of the `t.Run` closure of a table test) with no `return`,
`goto` or `t.Skip` before it, and it fails when it is

    if got != LIT { t.Errorf(...) }                  (or a `||` of such, or !reflect.DeepEqual(got, LIT))
    if got, want := f(), LIT; got != want { ... }    (`want` used nowhere else)
    assert.Equal(t, LIT, got)                        (require., EqualValues, Exactly)

A table test (`for _, c := range cases { t.Run(c.name, func(t *testing.T) {...}) }`) whose
closure checks `c.want` gets a row's `want` changed: that row's subtest ("TestX/row_name", as
Go rewrites names) and TestX fail, no other row does. A test that reads its own name
(`t.Name()`) or golden/snapshot files keeps its name and gets no copies.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath

import tree_sitter

from factory.verify.frameworks.copies.base import COPY_WRITERS
from factory.verify.frameworks.copies.treesitter import (
    Edit,
    apply,
    changed_bool,
    parse,
    source,
    twin_quoted,
    walk,
)
from factory.verify.frameworks.copies.units import (
    Reading,
    Site,
    Unit,
    Writer,
    number_twins,
)

_TEST = re.compile(r"Test(?![a-z])\w*")
_LITERALS = {"int_literal", "float_literal", "interpreted_string_literal", "raw_string_literal", "rune_literal",
             "true", "false"}
_FAILING = {"Error", "Errorf", "Fatal", "Fatalf", "Fail", "FailNow"}
_LEAVING = {"return_statement", "goto_statement"}
_SKIPPING = {"Skip", "Skipf", "SkipNow"}
_TESTIFY = {"Equal", "Equalf", "EqualValues", "EqualValuesf", "Exactly", "Exactlyf"}
_EQUAL_FUNCS = {("reflect", "DeepEqual"), ("cmp", "Equal")}
_KEYED_WORDS = ("golden", "snapshot", "goldie", "cupaloy", "approvals")
_GO_SPACE = set("\t\n\v\f\r \x85\xa0\u2028\u2029\u202f\u205f\u3000") | {chr(c) for c in range(0x2000, 0x200B)}

Expected = list[tree_sitter.Node] | str | None
"""An expected side: the literals in it, the name of a table row's field (`c.want`), or None."""


class GoWriter(Writer):
    globs = (":(glob)**/*_test.go",)

    def needle(self, test_id: str) -> str | None:
        top = test_id.split("/", 1)[0]
        return f"func {top}(" if _TEST.fullmatch(top) else None

    def read(self, files: dict[str, str], known: list[str]) -> Reading:
        roots = {p: r for p, t in files.items() if p.endswith(".go") and (r := parse("go", t)) is not None}
        types: dict[str, dict[str, list[str]]] = {}
        for path, root in roots.items():
            types.setdefault(str(PurePosixPath(path).parent), {}).update(_struct_types(root))
        reading = Reading(units=[], grammar=dict.fromkeys(roots, "go"), taken=set(),
                          make=lambda ws: "Test" + "".join(w[:1].upper() + w[1:] for w in ws),
                          stopwords=frozenset({"test"}), tidy=_tidy)
        for path, root in roots.items():
            reading.taken.update(source(n) for n in walk(root)
                                 if n.type in ("identifier", "field_identifier", "type_identifier"))
            reading.units += [_unit(path, f, known, types[str(PurePosixPath(path).parent)]) for f in _test_funcs(root)]
        return reading


def _tidy(old: str, new: str) -> str:
    """`new` (`old` with tests taken out) with each import only those tests used made blank (`_`):
    Go refuses to compile an import nothing uses. An import counts as used under the name its code
    was seen to use it by in `old` (its alias, or its path's last element less a version or `go-`)."""
    before, after = parse("go", old), parse("go", new)
    if before is None or after is None:
        return new
    used_before, used_after = _qualifiers(before), _qualifiers(after)
    edits = []
    for spec in (n for n in walk(after) if n.type == "import_spec"):
        alias, path = spec.child_by_field_name("name"), spec.child_by_field_name("path")
        if path is None or (alias is not None and source(alias) in ("_", ".")):
            continue
        names = {source(alias)} if alias is not None else _import_names(source(path).strip('"`'))
        if names & used_before and not names & used_after:
            edits.append(Edit(spec.start_byte, spec.end_byte, f"_ {source(path)}"))
    return apply(new, edits) if edits else new


def _qualifiers(root: tree_sitter.Node) -> set[str]:
    """Identifiers used to qualify a name (`reflect` in `reflect.DeepEqual`, `time` in `time.Duration`)."""
    found = set()
    for node in walk(root):
        if node.type == "selector_expression" and (operand := node.child_by_field_name("operand")) is not None:
            found.add(source(operand))
        elif node.type == "qualified_type" and (package := node.child_by_field_name("package")) is not None:
            found.add(source(package))
    return found


def _import_names(path: str) -> set[str]:
    """The names a package at `path` is likely declared under: `yaml` for gopkg.in/yaml.v3, `cmp`
    for github.com/google/go-cmp/cmp, `x` for example.com/x/v2."""
    parts = path.split("/")
    last = parts[-1]
    if re.fullmatch(r"v\d+", last) and len(parts) > 1:
        last = parts[-2]
    last = re.sub(r"\.v\d+$", "", last)
    return {last, last.removeprefix("go-"), last.removesuffix("-go"), last.replace("-", "_"), last.replace("-", "")}


def _test_funcs(root: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    for node in root.children:
        if node.type == "function_declaration" and _TEST.fullmatch(source(node.child_by_field_name("name"))):
            params = [p for p in node.child_by_field_name("parameters").named_children
                      if p.type == "parameter_declaration"]
            if len(params) == 1 and _is_t(params[0]) and node.child_by_field_name("body") is not None:
                yield node


def _is_t(param: tree_sitter.Node) -> bool:
    kind = param.child_by_field_name("type")
    return kind is not None and source(kind).replace(" ", "") == "*testing.T" and param.child_by_field_name("name") is not None


def _unit(path: str, func: tree_sitter.Node, known: list[str], types: dict[str, list[str]]) -> Unit:
    name_node = func.child_by_field_name("name")
    name = source(name_node)
    subtests = [i[len(name):] for i in known if i.startswith(name + "/")]
    unit = Unit(path=path, start=func.start_byte, end=func.end_byte, name=name, name_start=name_node.start_byte,
                name_end=name_node.end_byte, forms=lambda new: [new, *(new + s for s in subtests)])
    if _name_keyed(func):
        unit.why_not = "name-keyed"
        return unit
    body = func.child_by_field_name("body")
    t = source(func.child_by_field_name("parameters").named_children[0].child_by_field_name("name"))
    once = _used_once(func)
    for statement in _reached(body):
        for expected in _checks(statement, t, lambda n: _literals(n) or _bound(n, once)):
            if isinstance(expected, list):
                unit.sites += [Site(n.start_byte, n.end_byte, _twins(n), (name,)) for n in expected]
        if statement.type == "for_statement":
            unit.sites += _table_sites(statement, name, t, body, types, once)
    return unit


def _name_keyed(func: tree_sitter.Node) -> bool:
    ts = {source(p.child_by_field_name("name")) for p in walk(func)
          if p.type == "parameter_declaration" and _is_t(p)}
    for node in walk(func):
        if (node.type == "call_expression" and (f := node.child_by_field_name("function")).type == "selector_expression"
                and source(f.child_by_field_name("field")) == "Name" and source(f.child_by_field_name("operand")) in ts):
            return True
        if node.child_count == 0 and any(w in source(node).lower() for w in _KEYED_WORDS):
            return True
    return False


def _statements(block: tree_sitter.Node) -> list[tree_sitter.Node]:
    lists = [c for c in block.named_children if c.type == "statement_list"]
    return [s for s in lists[0].named_children if s.type != "comment"] if lists else []


def _reached(block: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """The top-level statements of `block` that run whenever the block runs: up to the first that
    may leave it (a return, goto or skip anywhere in it but inside a closure)."""
    for statement in _statements(block):
        yield statement
        if _may_leave(statement):
            return


def _may_leave(node: tree_sitter.Node, also: frozenset[str] = frozenset()) -> bool:
    if node.type in _LEAVING or node.type in also:
        return True
    if node.type == "func_literal":
        return False
    if (node.type == "call_expression" and (f := node.child_by_field_name("function")).type == "selector_expression"
            and (source(f.child_by_field_name("field")) in _SKIPPING or source(f) == "runtime.Goexit")):
        return True
    return any(_may_leave(c, also) for c in node.children)


def _checks(statement: tree_sitter.Node, t: str, expected: Callable[[tree_sitter.Node], Expected]) -> Iterator[Expected]:
    """The expected sides of the equality checks `statement` is, that fail the test (`t`) when unequal."""
    if statement.type == "if_statement" and _fails(statement.child_by_field_name("consequence"), t):
        for part in _disjuncts(statement.child_by_field_name("condition")):
            yield from _expected_of(_compared(part), expected)
    elif statement.type == "expression_statement" and (call := statement.named_children[0]).type == "call_expression":
        f, args = call.child_by_field_name("function"), _args(call)
        if (f.type == "selector_expression" and source(f.child_by_field_name("operand")) in ("assert", "require")
                and source(f.child_by_field_name("field")) in _TESTIFY and len(args) >= 3 and source(args[0]) == t):
            yield from _expected_of(args[1:3], expected)


def _expected_of(pair: list[tree_sitter.Node] | None, expected: Callable[[tree_sitter.Node], Expected]) -> Iterator[Expected]:
    """The one side of a compared pair that is expected (the other one is not)."""
    if pair:
        sides = [expected(n) for n in pair]
        if sum(s is not None for s in sides) == 1:
            yield next(s for s in sides if s is not None)


def _fails(block: tree_sitter.Node, t: str) -> bool:
    """Whether running `block` surely fails the test: a `t.Error`/`t.Fatal` before anything that may leave."""
    for statement in _statements(block):
        if statement.type == "expression_statement" and (call := statement.named_children[0]).type == "call_expression":
            f = call.child_by_field_name("function")
            if (f.type == "selector_expression" and source(f.child_by_field_name("operand")) == t
                    and source(f.child_by_field_name("field")) in _FAILING):
                return True
        if _may_leave(statement, frozenset({"break_statement", "continue_statement"})):
            return False
    return False


def _disjuncts(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """`a || b || c` -> a, b, c: when any is true the `if` body runs (a check of each)."""
    while node.type == "parenthesized_expression":
        node = node.named_children[0]
    if node.type == "binary_expression" and source(node.child_by_field_name("operator")) == "||":
        yield from _disjuncts(node.child_by_field_name("left"))
        yield from _disjuncts(node.child_by_field_name("right"))
    else:
        yield node


def _compared(node: tree_sitter.Node) -> list[tree_sitter.Node] | None:
    """The two sides of `a != b` or `!reflect.DeepEqual(a, b)`; None for any other condition."""
    if node.type == "binary_expression" and source(node.child_by_field_name("operator")) == "!=":
        return [node.child_by_field_name("left"), node.child_by_field_name("right")]
    if node.type == "unary_expression" and source(node.child_by_field_name("operator")) == "!":
        call = node.child_by_field_name("operand")
        if call.type == "call_expression" and (f := call.child_by_field_name("function")).type == "selector_expression":
            pair = (source(f.child_by_field_name("operand")), source(f.child_by_field_name("field")))
            if pair in _EQUAL_FUNCS and len(args := _args(call)) == 2:
                return args
    return None


def _args(call: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [a for a in call.child_by_field_name("arguments").named_children if a.type != "comment"]


def _literals(node: tree_sitter.Node) -> list[tree_sitter.Node] | None:
    """The literals of an expression made of literals (`3`, `-2.5`, `"a"`, `[]int{1, f(x)}`,
    `Point{X: 1}`): changing any one changes its value. None when it is not such an expression."""
    if node.type in _LITERALS:
        return [node]
    if node.type == "parenthesized_expression":
        return _literals(node.named_children[0])
    if node.type == "unary_expression":
        op, operand = source(node.child_by_field_name("operator")), node.child_by_field_name("operand")
        if op == "-" and operand.type in ("int_literal", "float_literal"):
            return [operand]
        return _literals(operand) if op == "&" and operand.type == "composite_literal" else None
    if node.type == "composite_literal":
        return _elements(node.child_by_field_name("body")) or None
    return None


def _elements(body: tree_sitter.Node) -> list[tree_sitter.Node]:
    """Literals among the values of a `{...}` (never a key: a changed map key may collide)."""
    found = []
    for element in _row_values(body).values():
        inner = _elements(element) if element.type == "literal_value" else _literals(element)
        found += inner or []
    return found


def _row_values(body: tree_sitter.Node) -> dict[str | int, tree_sitter.Node]:
    """A `{...}`'s values by key text (keyed elements) or position."""
    values: dict[str | int, tree_sitter.Node] = {}
    for position, element in enumerate(e for e in body.named_children if e.type != "comment"):
        if element.type == "literal_element":
            values[position] = element.named_children[0]
        elif element.type == "keyed_element":
            key, value = element.child_by_field_name("key"), element.child_by_field_name("value")
            if key is not None and value is not None:
                values[source(key)] = value.named_children[0]
    return values


def _used_once(func: tree_sitter.Node) -> dict[str, tree_sitter.Node]:
    """Locals declared `x := LIT` whose name occurs exactly twice in `func` (declared, then read
    once): a check of such a name checks the literal."""
    counts: dict[str, int] = {}
    for node in walk(func):
        if node.type == "identifier":
            counts[source(node)] = counts.get(source(node), 0) + 1
    bound = {}
    for node in walk(func):
        if node.type == "short_var_declaration":
            left = node.child_by_field_name("left").named_children
            right = node.child_by_field_name("right").named_children
            if len(left) == len(right):
                bound.update({source(n): v for n, v in zip(left, right, strict=True) if counts[source(n)] == 2})
    return bound


def _bound(node: tree_sitter.Node, once: dict[str, tree_sitter.Node]) -> list[tree_sitter.Node] | None:
    return _literals(once[source(node)]) if node.type == "identifier" and source(node) in once else None


def _twins(node: tree_sitter.Node) -> Callable[[int, random.Random], list[str]]:
    text = source(node)
    if node.type in ("int_literal", "float_literal"):
        return lambda count, rng: number_twins(text, count, rng, untyped=True)
    if node.type in ("interpreted_string_literal", "raw_string_literal"):
        return lambda count, rng: twin_quoted(text, 1, len(text) - 1, count, rng)
    if node.type == "rune_literal" and re.fullmatch(r"'[A-Za-z0-9]'", text):
        return lambda count, rng: twin_quoted(text, 1, 2, count, rng)
    flipped = changed_bool(text)
    return lambda count, rng: [flipped] if flipped else []


def _struct_types(root: tree_sitter.Node) -> dict[str, list[str]]:
    """Top-level struct type name -> its field names in order."""
    found = {}
    for spec in walk(root):
        if spec.type == "type_spec" and (kind := spec.child_by_field_name("type")).type == "struct_type":
            found[source(spec.child_by_field_name("name"))] = _fields(kind)
    return found


def _fields(struct: tree_sitter.Node) -> list[str]:
    names = []
    for declaration in walk(struct):
        if declaration.type == "field_declaration":
            own = [source(n) for n in declaration.children_by_field_name("name")]
            names += own or [source(declaration.child_by_field_name("type")).lstrip("*").split(".")[-1]]
    return names


def _table_sites(loop: tree_sitter.Node, name: str, t: str, body: tree_sitter.Node,
                 types: dict[str, list[str]], once: dict[str, tree_sitter.Node]) -> list[Site]:
    """The sites of a table test's loop: each row's compared field, for that row's subtest."""
    clause = next((c for c in loop.named_children if c.type == "range_clause"), None)
    if clause is None or clause.child_by_field_name("left") is None:
        return []
    variables = [source(n) for n in clause.child_by_field_name("left").named_children]
    table = clause.child_by_field_name("right")
    if table.type == "identifier":
        table = once.get(source(table))
    if table is None or table.type != "composite_literal" or len(variables) != 2:
        return []
    rows = _rows(table, types)
    inside = loop.child_by_field_name("body")
    runs = [found for s in _statements(inside) if (found := _subtest_call(s, t, variables))[1] is not None]
    if rows is None or len(runs) != 1 or _may_leave(inside, frozenset({"continue_statement", "break_statement"})):
        return []
    if any(source(n) == variables[1] for a in walk(inside) if a.type in ("assignment_statement", "inc_statement",
                                                                       "dec_statement") for n in walk(a.named_children[0])):
        return []  # the row is changed before it is checked
    titled, closure = runs[0]
    inner_t = source(closure.child_by_field_name("parameters").named_children[0].child_by_field_name("name"))
    row_var = variables[1]

    def row_field(node: tree_sitter.Node) -> Expected:
        if (node.type == "selector_expression" and source(node.child_by_field_name("operand")) == row_var
                and (field := source(node.child_by_field_name("field"))) != titled):
            return field
        return _literals(node) or _bound(node, once)

    by_title = _titles(rows, titled)
    sites = []
    for statement in _reached(closure.child_by_field_name("body")):
        for expected in _checks(statement, inner_t, row_field):
            if isinstance(expected, list):
                every = tuple(f"{name}/{title}" for title in by_title)
                sites += [Site(n.start_byte, n.end_byte, _twins(n), (name, *every)) for n in expected]
                continue
            for title, row in by_title.items():
                value = row.get(expected)
                literals = (_elements(value) if value.type == "literal_value" else _literals(value)) if value else None
                sites += [Site(n.start_byte, n.end_byte, _twins(n), (name, f"{name}/{title}")) for n in literals or []]
    return sites


def _subtest_call(statement: tree_sitter.Node, t: str, variables: list[str]) -> tuple[str | None, tree_sitter.Node | None]:
    """`t.Run(c.name, func(t *testing.T) {...})` -> ("name", the closure); `t.Run(name, ...)` over a
    map -> ("", the closure)."""
    if statement.type != "expression_statement" or (call := statement.named_children[0]).type != "call_expression":
        return None, None
    f, args = call.child_by_field_name("function"), _args(call)
    if source(f) != f"{t}.Run" or len(args) != 2 or args[1].type != "func_literal":
        return None, None
    params = [p for p in args[1].child_by_field_name("parameters").named_children if p.type == "parameter_declaration"]
    if len(params) != 1 or not _is_t(params[0]):
        return None, None
    title = args[0]
    if title.type == "selector_expression" and source(title.child_by_field_name("operand")) == variables[1]:
        return source(title.child_by_field_name("field")), args[1]
    if title.type == "identifier" and source(title) == variables[0] and variables[0] != "_":
        return "", args[1]
    return None, None


def _rows(table: tree_sitter.Node, types: dict[str, list[str]]) -> list[dict[str, tree_sitter.Node]] | None:
    """A table's rows as field -> value; a map table's key under ''."""
    kind = table.child_by_field_name("type")
    if kind.type not in ("slice_type", "array_type", "implicit_length_array_type", "map_type"):
        return None
    element = kind.child_by_field_name("element") if kind.type != "map_type" else kind.child_by_field_name("value")
    fields = _fields(element) if element.type == "struct_type" else types.get(source(element))
    if fields is None:
        return None
    rows = []
    for key, value in _row_values(table.child_by_field_name("body")).items():
        if value.type == "composite_literal":
            value = value.child_by_field_name("body")
        if value.type != "literal_value":
            return None
        values = _row_values(value)
        row = {fields[k] if isinstance(k, int) and k < len(fields) else k: v for k, v in values.items()}
        if kind.type == "map_type":
            row[""] = _key_node(table, key)
        rows.append(row)
    return rows


def _key_node(table: tree_sitter.Node, key: str | int) -> tree_sitter.Node | None:
    for element in table.child_by_field_name("body").named_children:
        if element.type == "keyed_element" and source(element.child_by_field_name("key")) == key:
            return element.child_by_field_name("key").named_children[0]
    return None


def _titles(rows: list[dict], field: str) -> dict[str, dict]:
    """Rows by the name their subtest reports (Go's rewriting: spaces to `_`), those whose name is
    a plain string literal and unique (a repeated name gets a `#01` suffix from Go)."""
    titled: dict[str, list[dict]] = {}
    for row in rows:
        node = row.get(field)
        if node is not None and (title := _subtest_name(node)):
            titled.setdefault(title, []).append(row)
    return {title: found[0] for title, found in titled.items() if len(found) == 1}


def _subtest_name(node: tree_sitter.Node) -> str | None:
    text = source(node)
    if node.type == "raw_string_literal":
        value = text[1:-1].replace("\r", "")
    elif node.type == "interpreted_string_literal" and "\\" not in text:
        value = text[1:-1]
    else:
        return None
    out = []
    for char in value:
        if char in _GO_SPACE:
            out.append("_")
        elif not char.isprintable():
            return None  # Go quotes it (`\x00`): not worth the risk of a wrong id
        else:
            out.append(char)
    return "".join(out) or None


COPY_WRITERS.add("go", GoWriter())
