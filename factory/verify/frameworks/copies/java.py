"""Copies of JUnit 4 and 5 tests (`@Test` methods, and JUnit 5 `@ParameterizedTest` methods
whose rows are a `@CsvSource`), for `java` tasks.

A copy is the whole method, annotations included, beside its original in the same class
(nested classes too), named in lowerCamelCase from the words of the file's test names. It
changes one expected value:

    assertEquals(LIT, actual)          the expected side of a 2-argument assertEquals,
    assertArrayEquals(new int[]{..})   assertArrayEquals, assertSame (no delta, no message)
    assertThrows(X.class, ...)         X -> an unrelated checked exception of the JDK, when
    @Test(expected = X.class)          the result is not kept (`E e = assertThrows(...)`
                                       would no longer compile); only in a test with no
                                       literal site (a reader tells a JDK name from X)

A `@CsvSource` row is a test of its own to JUnit, `pkg.C.method(String, long)[3]` (the
parameters' simple type names, the row counted from 1). Its site is the row's cell of the
parameter given as the expected side of an `assertEquals` the body surely reaches, when that
parameter is used nowhere else in the body (an input too, its change would change what is
compared): a plain decimal number (its sign kept) for an int, long, float or double, a plain
word for a String. A twin changes that cell in that row only, so it fails that row alone; its
other rows pass and answer to nothing. A method with another source beside it, a setting of the
annotation (delimiter, quotes, a text block) or a parameter with an annotation of its own is
neither copied nor renamed: its ids are not surely the ones JUnit reports.

Ids are as the JUnit XML reader gives them: `pkg.Outer$Inner.method()`, also written with
`.` for `$`, `#` for the last `.`, without `()`, or the bare method.

Never copied: a test whose outcome can follow its name (`TestInfo`, a `TestName` rule, a
stack walk, approval files), other parameterized, repeated and factory tests, a method
with a `@DisplayName`, a method another calls (a rename would not compile), tests of a file
that orders its tests or keeps one instance per class (a copy run between them could change
what its neighbours see), and a `@Test(expected = ...)` test's body (the statements after the
throw never run, so a changed assertion there would pass).
"""

from __future__ import annotations

import random
import re

import tree_sitter

from factory.verify.frameworks.copies.base import COPY_WRITERS
from factory.verify.frameworks.copies.treesitter import (
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
    differs,
    number_twins,
    taint,
)

_EQUALS = ("assertEquals", "assertArrayEquals", "assertSame")
_ASSERTIONS = ("", "Assertions", "Assert", "org.junit.jupiter.api.Assertions", "org.junit.Assert")
_UNCOPYABLE = {"TestInfo", "TestName", "getMethodName", "getStackTrace", "StackWalker", "Approvals",
               "toMatchSnapshot", "ExpectedException", "TestMethodOrder", "FixMethodOrder", "TestInstance"}
"""Identifiers of code whose outcome can follow a test's name, of a rule that ends a test at a
throw the writer cannot place (`ExpectedException`), of tests that share state in a set order
(one instance per class, an ordering): a copy run between them could fail its neighbours."""
_UNRELATED = ("java.util.concurrent.BrokenBarrierException", "java.util.zip.DataFormatException",
              "java.util.prefs.BackingStoreException", "java.lang.CloneNotSupportedException",
              "java.util.prefs.InvalidPreferencesFormatException")
"""Checked exceptions code under test has next to no reason to throw: an expected exception
swapped for one of these fails for a correct fix."""
_LIMITS = {False: (2**31 - 1, 2**32 - 1), True: (2**63 - 1, 2**64 - 1)}
"""The largest int / long literal, (decimal, hex-octal-binary)."""


class JavaWriter(Writer):
    globs = ("**/src/test/**/*.java", "**/test/**/*.java", "**/tests/**/*.java", "**/*Test.java",
             "**/*Tests.java", "**/Test*.java", "**/*IT.java")

    def needle(self, test_id: str) -> str | None:
        method = _method_of(test_id)
        return method if method and method.isidentifier() else None

    def read(self, files: dict[str, str], ids: list[str]) -> Reading:
        return read(files)


def _method_of(test_id: str) -> str:
    """`pkg.C.m()`, `pkg.C#m`, a parameterized row `pkg.C.m(String, long)[3]` -> `m`."""
    bare = re.sub(r"\([^()]*\)(?:\[[0-9]+\])?$", "", test_id.strip())
    return bare.replace("#", ".").rsplit(".", 1)[-1]


def read(files: dict[str, str]) -> Reading:
    reading = Reading(units=[], grammar={}, taken=set(), make=_camel)
    for path, text in files.items():
        if not path.endswith(".java") or (root := parse("java", text)) is None:
            continue
        reading.grammar[path] = "java"
        reading.taken.update(source(n) for n in walk(root) if n.type == "identifier")
        if not _uses_junit(root):
            continue
        package = next((source(c.named_children[0]) for c in root.children if c.type == "package_declaration"), "")
        units = [u for cls in root.children if cls.type == "class_declaration"
                 for u in _units(path, cls, package, [])]
        taint(units, [(n.start_byte, n.end_byte) for n in walk(root)
                      if n.type in ("identifier", "type_identifier") and source(n) in _UNCOPYABLE], "name-keyed or ordered")
        taint(units, [(n.start_byte, n.end_byte) for n in walk(root) if n.type == "method_declaration"
                      and source(n.child_by_field_name("name")) in (*_EQUALS, "assertThrows")], "own assertions")
        names = [source(n) for n in walk(root) if n.type == "identifier"]
        for unit in units:
            if names.count(unit.name) > 1:
                unit.why_not = unit.why_not or "referenced"  # a rename would break what calls it
        reading.units += units
    return reading


def _uses_junit(root: tree_sitter.Node) -> bool:
    return any(n.type == "import_declaration" and "org.junit" in source(n) for n in root.children) or \
        "org.junit." in source(root)


def _units(path: str, cls: tree_sitter.Node, package: str, outer: list[str]):
    chain = [*outer, source(cls.child_by_field_name("name"))]
    body = cls.child_by_field_name("body")
    for member in body.named_children if body else []:
        if member.type == "class_declaration":
            yield from _units(path, member, package, chain)
        elif member.type == "method_declaration" and (test := _test_annotation(member)) is not None:
            yield _unit(path, member, test, _classes(package, chain))
        elif member.type == "method_declaration" and parameterized(member):
            yield _rows_unit(path, member, _classes(package, chain))


def _classes(package: str, chain: list[str]) -> list[str]:
    prefix = f"{package}." if package else ""
    return list(dict.fromkeys([prefix + "$".join(chain), prefix + ".".join(chain)]))


def _annotations(method: tree_sitter.Node) -> list[tree_sitter.Node]:
    modifiers = next((c for c in method.children if c.type == "modifiers"), None)
    return [c for c in modifiers.children if c.type in ("annotation", "marker_annotation")] if modifiers else []


def _annotation_name(annotation: tree_sitter.Node) -> str:
    return source(annotation.child_by_field_name("name"))


def _test_annotation(method: tree_sitter.Node) -> tree_sitter.Node | None:
    for annotation in _annotations(method):
        name = _annotation_name(annotation)
        if name == "Test" or (name.startswith("org.junit.") and name.endswith(".Test")):
            return annotation
    return None


def _unit(path: str, method: tree_sitter.Node, test: tree_sitter.Node, classes: list[str]) -> Unit:
    name = method.child_by_field_name("name")

    def forms(method_name: str) -> list[str]:
        return [*(f"{c}{sep}{method_name}{call}" for c in classes for sep in (".", "#") for call in ("()", "")),
                f"{method_name}()", method_name]

    unit = Unit(path=path, start=method.start_byte, end=method.end_byte, name=source(name),
                name_start=name.start_byte, name_end=name.end_byte, forms=forms)
    expected = _expected_exception(test)
    if any(_annotation_name(a).endswith("DisplayName") for a in _annotations(method)):
        unit.why_not = "display name"
    elif method.child_by_field_name("parameters").named_child_count:
        unit.why_not = "parameters"
    elif expected is not None:
        unit.sites = [_exception_site(expected)]
    else:
        unit.sites = _body_sites(method.child_by_field_name("body"))
    return unit


def parameterized(method: tree_sitter.Node) -> bool:
    """A JUnit 5 `@ParameterizedTest` method: its body runs once per row of its source."""
    return any(_annotation_name(a).rsplit(".", 1)[-1] == "ParameterizedTest" for a in _annotations(method))


def _rows_unit(path: str, method: tree_sitter.Node, classes: list[str]) -> Unit:
    """A `@ParameterizedTest` whose rows are a `@CsvSource`: each row is a test of its own to
    JUnit (`pkg.C.m(String, long)[3]`, 1-based), and a row's expected cell a site of that row."""
    name = method.child_by_field_name("name")
    params = method.child_by_field_name("parameters").named_children
    types = _reported_types(params)
    rows = _csv_rows(method) if types is not None else None

    def row_forms(method_name: str, row: int) -> list[str]:
        reported = f"{method_name}({types})[{row + 1}]"
        return [*(f"{c}{sep}{reported}" for c in classes for sep in (".", "#")), reported]

    def forms(method_name: str) -> list[str]:
        return [form for row in range(len(rows or [])) for form in row_forms(method_name, row)]

    unit = Unit(path=path, start=method.start_byte, end=method.end_byte, name=source(name),
                name_start=name.start_byte, name_end=name.end_byte, forms=forms)
    if rows is None:
        unit.why_not = "parameters"  # a source or a parameter this writer does not read: its ids are unsure
        return unit
    if any(_annotation_name(a).endswith("DisplayName") for a in _annotations(method)):
        unit.why_not = "display name"  # as a @Test's
        return unit
    column = _compared_column(method.child_by_field_name("body"), params)
    annotation = _sources(method)[0]
    for row, literal in enumerate(rows):
        cells = _cells(literal)
        if column is not None and len(cells) == len(params):
            start, end = cells[column]
            cell, kind = source(literal).encode()[start - literal.start_byte:end - literal.start_byte].decode(), \
                _type_of(params[column])
            if kind != "String" and cell.startswith("-"):
                start, cell = start + 1, cell[1:]  # the sign stays, as at a literal's unary minus
            twins = _cell_twins(cell, kind)
            if twins is not None:
                unit.sites.append(Site(start, end, twins, tuple(row_forms(unit.name, row)),
                                       data=(annotation.start_byte, annotation.end_byte)))
    return unit


_SOURCE = re.compile(r"(?:\w+\.)*\w*(?:Source|Sources)")
"""An argument source of JUnit (`@CsvSource`, `@MethodSource`, `@NullSource`, a container of them)."""


def _sources(method: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [a for a in _annotations(method) if _SOURCE.fullmatch(_annotation_name(a))]


def _csv_rows(method: tree_sitter.Node) -> list[tree_sitter.Node] | None:
    """The string literals of the method's one source, a `@CsvSource({...})` with rows alone (no
    delimiter, quote, null values, text block or header set), each a row of JUnit's; None else:
    a second source or a setting would shift or change what JUnit numbers."""
    sources = _sources(method)
    if len(sources) != 1 or _annotation_name(sources[0]).rsplit(".", 1)[-1] != "CsvSource":
        return None
    args = sources[0].child_by_field_name("arguments")
    values = args.named_children if args is not None else []
    if len(values) == 1 and values[0].type == "element_value_pair":
        values = [values[0].child_by_field_name("value")] if source(values[0].child_by_field_name("key")) == "value" else []
    if len(values) == 1 and values[0].type == "element_value_array_initializer":
        values = values[0].named_children
    if not values or any(v.type != "string_literal" or source(v).startswith('"""') for v in values):
        return None
    return values


def _cells(literal: tree_sitter.Node) -> list[tuple[int, int]]:
    """The bytes of each cell of a CSV row (without the blanks JUnit trims), [] for a row holding
    a quote, an escape or nothing: there cells are not where a split on commas puts them."""
    text = source(literal).encode()[1:-1]
    if not text.strip() or any(c in text for c in b"'\"\\#"):
        return []
    cells, at = [], literal.start_byte + 1
    for cell in text.split(b","):
        lead = len(cell) - len(cell.lstrip())
        cells.append((at + lead, at + lead + len(cell.strip())))
        at += len(cell) + 1
    return cells


def _reported_types(params: list[tree_sitter.Node]) -> str | None:
    """The parameter types as JUnit reports them (`String, long`: each class's simple name), None
    for a parameter whose conversion an annotation or a receiver may change, or varargs."""
    names = []
    for param in params:
        if param.type != "formal_parameter" or any(c.type == "modifiers" for c in param.children):
            return None
        names.append(_type_of(param))
    return ", ".join(names)


def _type_of(param: tree_sitter.Node) -> str:
    """A parameter's type as `Class.getSimpleName` spells it: no type arguments, no package."""
    text = source(param.child_by_field_name("type"))
    while (bare := re.sub(r"<[^<>]*>", "", text)) != text:
        text = bare
    return re.sub(r"\s+", "", text).rsplit(".", 1)[-1]


def _compared_column(body: tree_sitter.Node | None, params: list[tree_sitter.Node]) -> int | None:
    """The parameter given as the expected side of an `assertEquals` the body surely reaches, and
    used nowhere else in the body (an input too, a changed cell would change what is compared)."""
    names = [source(p.child_by_field_name("name")) for p in params]
    used = [source(n) for n in walk(body) if n.type == "identifier" and not _member_name(n)] if body else []
    for call in reached_calls(body):
        target = call.child_by_field_name("object")
        args = call.child_by_field_name("arguments").named_children
        if (source(call.child_by_field_name("name")) == "assertEquals" and len(args) == 2
                and (source(target) if target else "") in _ASSERTIONS and args[0].type == "identifier"
                and source(args[0]) in names and used.count(source(args[0])) == 1):
            return names.index(source(args[0]))
    return None


def _member_name(node: tree_sitter.Node) -> bool:
    """`minor` of `m.minor()` or `m.minor`: a method's or field's name, not a variable."""
    parent = node.parent
    field = {"method_invocation": "name", "field_access": "field"}.get(parent.type if parent else "")
    return field is not None and parent.child_by_field_name(field) == node


_CELL_NUMBERS = {**dict.fromkeys(("int", "Integer", "long", "Long"), r"[0-9]+"),
                 **dict.fromkeys(("double", "Double", "float", "Float"), r"[0-9]+(?:\.[0-9]+)?")}
"""A cell (its sign aside) JUnit converts to a parameter of the type as the digits read (`Long.decode`
would take a leading 0 as octal, `0x` as hex, and refuses `_`)."""


def _cell_twins(cell: str, kind: str):
    """How a cell's value is written changed for a parameter of type `kind`, None for a cell this
    writer does not change surely (another type, a form JUnit reads otherwise)."""
    if kind == "String":
        if not re.fullmatch(r"[\w.:/+-]+(?: [\w.:/+-]+)*", cell):
            return None
        return lambda count, rng: [t[1:-1] for t in twin_quoted(f'"{cell}"', 1, len(cell) + 1, count, rng)
                                   if re.fullmatch(r"[^\s,'\"\\#](?:[^,'\"\\]*[^\s,'\"\\])?", t[1:-1])]
    pattern = _CELL_NUMBERS.get(kind)
    if pattern is None or not _plain_number(cell, pattern):
        return None
    single = kind in ("float", "Float")
    return lambda count, rng: [t for t in _java_numbers(cell, count, rng) if _plain_number(t, pattern)
                               and (not single or differs(cell + "f", t + "f"))]


def _plain_number(text: str, pattern: str) -> bool:
    return bool(re.fullmatch(pattern, text)) and (len(text) == 1 or text[0] != "0" or "." in text)


def ends_at_throw(method: tree_sitter.Node) -> bool:
    """A JUnit 4 `@Test(expected = X.class)` test: its statements after the throw never run."""
    test = _test_annotation(method)
    return test is not None and _expected_exception(test) is not None


def _expected_exception(test: tree_sitter.Node) -> tree_sitter.Node | None:
    """`X.class` of JUnit 4's `@Test(expected = X.class)`."""
    for pair in walk(test):
        if pair.type == "element_value_pair" and source(pair.child_by_field_name("key")) == "expected":
            value = pair.child_by_field_name("value")
            return value if value is not None and value.type == "class_literal" else None
    return None


def reached_calls(body: tree_sitter.Node | None) -> list[tree_sitter.Node]:
    """The method calls that are whole statements of a test's body, up to the first statement
    that may return: the test reaches each whatever the code under test does, or fails first."""
    calls: list[tree_sitter.Node] = []
    for statement in body.named_children if body else []:
        if _may_return(statement):
            break  # what follows may never run
        call = statement.named_children[0] if statement.type == "expression_statement" else None
        if call is not None and call.type == "method_invocation":
            calls.append(call)
    return calls


def _body_sites(body: tree_sitter.Node | None) -> list[Site]:
    sites: list[Site] = []
    for call in reached_calls(body):
        name = source(call.child_by_field_name("name"))
        target = call.child_by_field_name("object")
        args = call.child_by_field_name("arguments").named_children
        if (source(target) if target else "") not in _ASSERTIONS:
            continue
        if name in _EQUALS and len(args) == 2:
            sites += _literal_sites(args[0])
        elif name == "assertThrows" and len(args) in (2, 3) and args[0].type == "class_literal":
            sites.append(_exception_site(args[0]))
    return sites


def _may_return(statement: tree_sitter.Node) -> bool:
    """A `return` of the test itself in `statement` (not one of a lambda or an inner class)."""
    stack = [statement]
    while stack:
        node = stack.pop()
        if node.type == "return_statement":
            return True
        if node.type not in ("lambda_expression", "class_body"):
            stack.extend(node.children)
    return False


def _literal_sites(node: tree_sitter.Node) -> list[Site]:
    kind = node.type
    if kind in ("parenthesized_expression", "array_initializer"):
        return [s for child in node.named_children for s in _literal_sites(child)]
    if kind == "array_creation_expression":
        value = node.child_by_field_name("value")
        return _literal_sites(value) if value is not None else []
    if kind == "unary_expression" and source(node.child_by_field_name("operator")) in ("-", "+"):
        operand = node.child_by_field_name("operand")
        return _literal_sites(operand) if operand.type.endswith("_literal") and "string" not in operand.type else []
    if kind in ("decimal_integer_literal", "hex_integer_literal", "binary_integer_literal", "decimal_floating_point_literal"):
        return [_site(node, _java_numbers)]
    if kind == "string_literal":
        return [_site(node, _java_strings)]
    if kind == "character_literal":
        return [_site(node, _chars)] if len(source(node)) == 3 and source(node)[1].isascii() \
            and source(node)[1].isalnum() else []
    if kind in ("true", "false"):
        return [_site(node, lambda text, count, rng: [changed_bool(text)])]
    return []


def _site(node: tree_sitter.Node, twins) -> Site:
    text = source(node)
    return Site(node.start_byte, node.end_byte, lambda count, rng: twins(text, count, rng))


def _java_numbers(text: str, count: int, rng: random.Random) -> list[str]:
    return [new for new in number_twins(text, count, rng) if _fits(new)]


def _fits(literal: str) -> bool:
    """Whether an integer literal still is an int (a long, with `L`); floats always are."""
    if _kind_of(literal) != "integer":
        return True
    digits = literal.replace("_", "").rstrip("lL")
    radix = digits[:2].lower() in ("0x", "0b")
    decimal, other = _LIMITS[literal[-1:] in "lL"]
    return int(digits, 0 if radix else 10) <= (other if radix else decimal)


def _kind_of(literal: str) -> str:
    lower = literal.lower()
    if lower.startswith(("0x", "0b")) or (lower.rstrip("l").replace("_", "").isdigit()):
        return "integer"
    return "float"


def _java_strings(text: str, count: int, rng: random.Random) -> list[str]:
    quotes = 3 if text.startswith('"""') else 1
    return twin_quoted(text, quotes, len(text) - quotes, count, rng)


def _chars(text: str, count: int, rng: random.Random) -> list[str]:
    return twin_quoted(text, 1, 2, count, rng)


def _exception_site(literal: tree_sitter.Node) -> Site:
    """The type of `X.class` swapped for an unrelated exception."""
    kind = literal.named_children[0]
    simple = source(kind).rsplit(".", 1)[-1]
    pool = [e for e in _UNRELATED if e.rsplit(".", 1)[-1] != simple]
    return Site(kind.start_byte, kind.end_byte, lambda count, rng: rng.sample(pool, min(count, len(pool))), plain=False)


def _camel(parts: list[str]) -> str:
    return parts[0].lower() + "".join(p.capitalize() for p in parts[1:])


COPY_WRITERS.add("java", JavaWriter())
