"""Copies of Rust tests: a `#[test]` fn with its attributes, in `mod tests` of a src file or at the
top of a tests/*.rs file, copied whole beside itself in the same module.

A site is a literal of an `assert_eq!` argument made of nothing but literals (`3`, `"a\\n"`,
`vec![1, 2]`, `&[b'x']`, `(1, true)`), with the other argument not such a one, in a statement at
the fn's top level that runs whenever the fn does (no `return` before it): the comparison is then
std's own `PartialEq` of literal types, which a changed literal fails under any correct fix.
A type of the crate's could have an equality that ignores a field, so a literal inside a struct,
enum variant or call is never a site. `assert_ne!` is none either: a changed literal may still
differ. A `#[should_panic(expected = "msg")]` test has its message as its only site (libtest
checks that the panic message contains it).

Ids are as libtest reports them within a test target: `reader::tests::parses` for a test in
`mod tests` of src/reader.rs, `parses` for a top-level fn of tests/reader.rs.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
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

    def needle(self, test_id: str) -> str | None:
        name = test_id.removesuffix(_PANICS).rsplit("::", 1)[-1]
        return f"fn {name}(" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else None

    def read(self, files: dict[str, str], ids: list[str]) -> Reading:
        reading = Reading(units=[], grammar={}, taken=set(), make="_".join)
        for path, text in files.items():
            module = _module(path)
            if not path.endswith(".rs") or (root := parse("rust", text)) is None:
                continue
            reading.grammar[path] = "rust"
            reading.taken.update(source(n) for n in walk(root) if n.type == "identifier")
            reading.units += [_unit(path, f, attrs, full) for f, attrs, full in (_tests(root, module) if module is not None else [])]
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


def _unit(path: str, func: tree_sitter.Node, attrs: list[tree_sitter.Node], full: str) -> Unit:
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
    return unit


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
