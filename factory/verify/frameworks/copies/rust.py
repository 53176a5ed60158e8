"""Copies of Rust tests: a `#[test]` fn with its attributes, in `mod tests` of a src file or at the
top of a tests/*.rs file, copied whole beside itself in the same module.

A site is a literal of an `assert_eq!` argument made of nothing but literals (`3`, `"a\\n"`,
`vec![1, 2]`, `&[b'x']`, `(1, true)`), with the other argument not such a one, in a statement at
the fn's top level that runs whenever the fn does (no `return` before it): the comparison is then
std's own `PartialEq` of literal types, which a changed literal fails under any correct fix.
A type of the crate's could have an equality that ignores a field, so a literal inside a struct,
enum variant or call is never a site. Its variants it surely tells apart, though: a path to a
variant of an enum of the repo (`Kind::Plus`, `&crate::lex::Kind::Plus`, `Error::Eof { line: 2 }`)
that is a whole argument of `assert_eq!` or a whole side of `assert!(a == b)`, the other side not
a constant, is a site whose twins name other variants of that enum of the same shape (unit, the
same fields, the same tuple types), so every twin compiles; the enum must be declared exactly once
among the files read (`declares` brings the files that declare one) and not be std's.
`assert_ne!` is none either: a changed literal may still differ. A `#[should_panic(expected = "msg")]` test has its message as its only site (libtest
checks that the panic message contains it).

Ids are as libtest reports them within a test target: `reader::tests::parses` for a test in
`mod tests` of src/reader.rs, `parses` for a top-level fn of tests/reader.rs.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import PurePosixPath

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
    number_twins,
)

_PANICS = " - should panic"
_LITERALS = {"integer_literal", "float_literal", "string_literal", "raw_string_literal", "char_literal",
             "boolean_literal"}
_KEYED = re.compile(r"snapshot|expect_file|function_name|thread::current|insta::")
"""What reads a test's own name: insta's snapshots (named after the fn), the thread libtest names after it."""
_PARAMETERIZED = re.compile(r"rstest|test_case|\bcase\b|\bvalues\b|template|proptest|quickcheck")


class RustWriter(Writer):
    globs = (":(glob)**/*.rs",)
    declares = r"(^|[^[:alnum:]_])enum[[:space:]]+[[:alpha:]_]"

    def needle(self, test_id: str) -> str | None:
        name = test_id.removesuffix(_PANICS).rsplit("::", 1)[-1]
        return f"fn {name}(" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else None

    def read(self, files: dict[str, str], ids: list[str]) -> Reading:
        reading = Reading(units=[], grammar={}, taken=set(), make="_".join)
        roots = {path: root for path, text in files.items() if path.endswith(".rs") and (root := parse("rust", text)) is not None}
        enums = _enums(roots.values())
        for path, root in roots.items():
            module = _module(path)
            reading.grammar[path] = "rust"
            reading.taken.update(source(n) for n in walk(root) if n.type == "identifier")
            # a name the file takes from std is std's there, whatever the repo declares
            std = {w for use in re.findall(r"\buse\s+(?:::)?(?:std|core|alloc)::[^;]*;", files[path])
                   for w in re.findall(r"\w+", use)}
            known = {name: variants for name, variants in enums.items() if name not in std}
            reading.units += [_unit(path, f, attrs, full, known)
                              for f, attrs, full in (_tests(root, module) if module is not None else [])]
        return reading


def _module(path: str) -> list[str] | None:
    """The module path of a file within its test target; None for a file that is no target's."""
    parts = PurePosixPath(path).parts
    if len(parts) >= 2 and parts[-2] == "tests":
        return []
    if "src" not in parts:
        return None
    rest = list(parts[len(parts) - parts[::-1].index("src"):])
    rest[-1] = PurePosixPath(rest[-1]).stem
    if rest[0] == "bin" or rest in (["lib"], ["main"]):
        return []
    return rest[:-1] if rest[-1] == "mod" else rest


def _tests(node: tree_sitter.Node, module: list[str]) -> Iterator[tuple[tree_sitter.Node, list[tree_sitter.Node], str]]:
    """(fn, its attributes, its id) of each `#[test]` fn under `node`, through inline `mod`s."""
    attrs: list[tree_sitter.Node] = []
    for child in node.named_children:
        if child.type == "attribute_item":
            attrs.append(child)
            continue
        if child.type == "function_item" and any(_attribute(a)[0] in ("test", "tokio::test") for a in attrs):
            yield child, attrs, "::".join([*module, source(child.child_by_field_name("name"))])
        elif child.type == "mod_item" and (body := child.child_by_field_name("body")) is not None:
            yield from _tests(body, [*module, source(child.child_by_field_name("name"))])
        if child.type not in ("line_comment", "block_comment"):
            attrs = []


def _attribute(item: tree_sitter.Node) -> tuple[str, tree_sitter.Node | None]:
    """`#[should_panic(expected = "x")]` -> ("should_panic", its token tree)."""
    attribute = next((c for c in item.named_children if c.type == "attribute"), None)
    if attribute is None or not attribute.named_children:
        return "", None
    return source(attribute.named_children[0]), attribute.child_by_field_name("arguments")


def _unit(path: str, func: tree_sitter.Node, attrs: list[tree_sitter.Node], full: str, enums: _Enums) -> Unit:
    name_node = func.child_by_field_name("name")
    prefix = full[:len(full) - len(source(name_node))]
    unit = Unit(path=path, start=attrs[0].start_byte, end=func.end_byte, name=source(name_node),
                name_start=name_node.start_byte, name_end=name_node.end_byte,
                forms=lambda new: [prefix + new, prefix + new + _PANICS])
    names = [_attribute(a)[0] for a in attrs]
    everything = " ".join(source(a) for a in attrs) + source(func)
    if _KEYED.search(everything) or _PARAMETERIZED.search(" ".join(names)) or "ignore" in names or "bench" in names:
        unit.why_not = "name-keyed, parameterized or not run"
        return unit
    if "should_panic" in names:
        message = _expected_message(_attribute(attrs[names.index("should_panic")])[1])
        if message is not None:
            # libtest matches the message as a substring of the panic's
            unit.sites.append(Site(message.start_byte, message.end_byte, _twins(message), exact=False))
        return unit
    for statement in _reached(func.child_by_field_name("body")):
        call = statement.named_children[0] if statement.type == "expression_statement" and statement.named_children else statement
        if call.type == "macro_invocation" and _macro(call) == "assert_eq":
            args = _args(call)
            literal = [_literals(a) for a in args[:2]] if len(args) >= 2 else []
            if sum(x is not None for x in literal) == 1:
                found = next(x for x in literal if x is not None)
                unit.sites += [Site(n.start_byte, n.end_byte, _twins(n)) for n in found]
            unit.sites += _variant_site(args[:2], enums)
        elif call.type == "macro_invocation" and _macro(call) == "assert" and (args := _args(call)):
            sides = _sides(args[0])
            unit.sites += _variant_site(sides, enums) if sides else []
    return unit


_Enums = dict[str, list[tuple[str, str]]]
"""An enum's name -> its variants, (name, shape), for the enums declared once."""


def _enums(roots: Iterable[tree_sitter.Node]) -> _Enums:
    """The repo's enums, each with its variants' shapes (`unit`, its fields or its tuple types, as
    written); a name that more than one type is declared under is left out (which one a test
    means is not known), and a variant under `#[cfg]` gets a shape of its own (it may not be built)."""
    declared: dict[str, list[tree_sitter.Node]] = {}
    for root in roots:
        for node in walk(root):
            if node.type in ("enum_item", "struct_item", "union_item", "type_item", "trait_item"):
                declared.setdefault(source(node.child_by_field_name("name")), []).append(node)
    enums: _Enums = {}
    for name, nodes in declared.items():
        if len(nodes) != 1 or nodes[0].type != "enum_item" or (body := nodes[0].child_by_field_name("body")) is None:
            continue
        variants: list[tuple[str, str]] = []
        cfg = False
        for child in body.named_children:
            if child.type == "attribute_item":
                cfg = cfg or _attribute(child)[0].startswith("cfg")
            elif child.type == "enum_variant":
                fields = child.child_by_field_name("body")
                shape = "unit" if fields is None else " ".join(sorted(
                    "".join(source(f).split()) for f in fields.named_children if f.type != "line_comment"))
                if fields is not None and fields.type == "ordered_field_declaration_list":
                    shape = "(" + "".join(source(fields).split())
                variant = source(child.child_by_field_name("name"))
                variants.append((variant, f"cfg {variant}" if cfg else shape))
                cfg = False
        enums[name] = variants
    return enums


def _sides(tokens: list[tree_sitter.Node]) -> list[list[tree_sitter.Node]] | None:
    """`a == b` -> [a, b]; None for anything else at the top level (`||`, `&&`, a second `==`, which
    would leave the comparison's outcome to something else)."""
    at = [i for i, t in enumerate(tokens) if t.type in ("==", "!=", "&&", "||", "<", ">", "<=", ">=", "=", ";")]
    if len(at) != 1 or tokens[at[0]].type != "==":
        return None
    return [tokens[:at[0]], tokens[at[0] + 1:]]


def _variant_site(sides: list[list[tree_sitter.Node]], enums: _Enums) -> list[Site]:
    """The site of two compared sides where one is a variant of an enum in `enums` and the other
    is neither such a one nor literals only (two constants compare alike in a twin)."""
    if len(sides) != 2:
        return []
    found = [_variant(side, enums) for side in sides]
    constant = [f is not None or _literals(side) is not None for f, side in zip(found, sides, strict=True)]
    if sum(constant) != 1 or (variant := next((f for f in found if f is not None), None)) is None:
        return []
    node, others = variant
    return [Site(node.start_byte, node.end_byte, lambda count, rng: rng.sample(others, min(count, len(others))))]


def _variant(tokens: list[tree_sitter.Node], enums: _Enums) -> tuple[tree_sitter.Node, list[str]] | None:
    """`[&]path::Enum::Variant[ {..} | (..)]` -> (the variant's name, the enum's other variants of its
    shape), where `Enum` is in `enums`, the variant is one of it and some other shares its shape."""
    while tokens and tokens[0].type == "&":
        tokens = tokens[1:]
    if tokens and tokens[-1].type == "token_tree":
        tokens = tokens[:-1]
    path = [source(t) for t in tokens]
    if (len(path) < 3 or len(path) % 2 == 0 or any(p != "::" for p in path[1::2]) or path[0] in ("std", "core", "alloc")
            or not all(t.type in ("identifier", "crate", "super", "self") for t in tokens[::2])):
        return None
    variants = dict(enums.get(path[-3], []))
    shape = variants.get(path[-1])
    others = [name for name, other in variants.items() if other == shape and name != path[-1]]
    return (tokens[-1], others) if shape is not None and others else None


def _reached(block: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """The fn's top-level statements up to the first that may return early."""
    for statement in block.named_children:
        if statement.type in ("line_comment", "block_comment"):
            continue
        yield statement
        if _may_return(statement):
            return


def _may_return(node: tree_sitter.Node) -> bool:
    if node.type == "return_expression":  # a `?` in a passing test never returns early
        return True
    if node.type in ("closure_expression", "function_item"):
        return False
    return any(_may_return(c) for c in node.children)


def _macro(call: tree_sitter.Node) -> str:
    return source(call.child_by_field_name("macro")).removeprefix("std::").removeprefix("core::").removeprefix(
        "pretty_assertions::")


def _args(call: tree_sitter.Node) -> list[list[tree_sitter.Node]]:
    """A macro's arguments: the tokens of its token tree between top-level commas."""
    tree = next((c for c in call.children if c.type == "token_tree"), None)
    if tree is None:
        return []
    args: list[list[tree_sitter.Node]] = [[]]
    for token in tree.children[1:-1]:
        if token.type == ",":
            args.append([])
        elif token.type not in ("line_comment", "block_comment"):
            args[-1].append(token)
    return [a for a in args if a]


def _literals(tokens: list[tree_sitter.Node]) -> list[tree_sitter.Node] | None:
    """The literals of tokens that are nothing but literals, `-`, `&`, `,` and `[..]`/`(..)`/`vec![..]`
    of such; None for anything else (a name, a call, an operator, `[0; 3]`)."""
    found: list[tree_sitter.Node] = []
    for at, token in enumerate(tokens):
        if token.type in _LITERALS:
            found.append(token)
        elif token.type == "token_tree":
            opener = source(token.children[0])
            after_vec = at >= 2 and source(tokens[at - 2]) == "vec" and tokens[at - 1].type == "!"
            if opener not in "[(" or (at and tokens[at - 1].type == "!" and not after_vec):
                return None
            inner = _literals([t for t in token.children[1:-1] if t.type not in ("line_comment", "block_comment")])
            if inner is None and len(token.children) > 2:
                return None
            found += inner or []
        elif token.type == "identifier" and source(token) == "vec" and at + 1 < len(tokens) and tokens[at + 1].type == "!":
            continue
        elif token.type not in ("-", "&", ",", "!"):
            return None
    return found or None


def _expected_message(tree: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The `"msg"` of `(expected = "msg")`, when it is long enough that a one-letter change makes it
    unlikely to turn up elsewhere in the panic's message."""
    if tree is None:
        return None
    tokens = [t for t in tree.children if t.type not in ("(", ")")]
    if (len(tokens) == 3 and source(tokens[0]) == "expected" and tokens[2].type == "string_literal"
            and len(re.findall(r"[A-Za-z0-9]", source(tokens[2]))) >= 4):
        return tokens[2]
    return None


def _twins(node: tree_sitter.Node) -> Callable[[int, random.Random], list[str]]:
    text = source(node)
    if node.type in ("integer_literal", "float_literal"):
        return lambda count, rng: number_twins(text, count, rng, untyped=True)
    if node.type in ("string_literal", "raw_string_literal"):
        return lambda count, rng: twin_quoted(text, text.index('"') + 1, text.rindex('"'), count, rng)
    if node.type == "char_literal" and re.fullmatch(r"b?'[A-Za-z0-9]'", text):
        return lambda count, rng: twin_quoted(text, len(text) - 2, len(text) - 1, count, rng)
    flipped = changed_bool(text) if node.type == "boolean_literal" else None
    return lambda count, rng: [flipped] if flipped else []


COPY_WRITERS.add("rust", RustWriter())
