"""Copies of JavaScript and TypeScript tests (`it`/`test`/`specify` calls of jest, vitest,
mocha), for `javascript` and `typescript` tasks.

A copy of `it("title", fn)` is `it("new title", fn')` in the same describe block, beside its
original, its title a lower-case phrase of words from the file's own titles. It changes one
expected value, in a statement of the test's own body:

    expect(x).toBe(LIT) / .toEqual(LIT) / .toStrictEqual(LIT)       (jest, vitest)
    expect(x).to.equal(LIT) / .to.eql(LIT) / .to.deep.equal(LIT)    (chai; never after `.not`)
    assert.equal / strictEqual / deepEqual / deepStrictEqual(a, b)  (node:assert, chai)
    expect(fn).toThrow("message")                                   (a substring: 4 characters or more)

LIT is a literal, or an array or object of them (no spread, no repeated key): a number, a
string, a template without substitutions, a boolean.

Ids are as the JavaScript readers give them: the describe titles and the test's joined by
` › ` (jest) or ` > ` (vitest, TAP) or a space (mocha's full title), or the bare title.

Never copied: `.only`/`.skip`/`.todo`/`.each` tests and tests in such describes, tests whose
title or a describe title is not a plain string, tests whose outcome can follow their name
(snapshots, `currentTestName`, `this.test`, a context's `name`), and tests that assign a
variable they do not declare (run twice, they would change what the next tests read).
"""

from __future__ import annotations

import re
from dataclasses import replace

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
    taint,
)

_GRAMMARS = {".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
             ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx"}
_TESTS = ("it", "test", "specify")
_DESCRIBES = ("describe", "context", "suite")
_FUNCTIONS = ("arrow_function", "function_expression", "function")
_JEST_EQUALS = ("toBe", "toEqual", "toStrictEqual")
_THROWS = ("toThrow", "toThrowError")
_CHAI_EQUALS = ("equal", "equals", "eq", "eql", "eqls")
_CHAI_WORDS = ("to", "be", "been", "is", "that", "which", "and", "has", "have", "with", "at", "of", "same",
               "deep", "does", "still")
_ASSERT_EQUALS = ("equal", "strictEqual", "deepEqual", "deepStrictEqual")
_NAME_KEYED = {"toMatchSnapshot", "toMatchInlineSnapshot", "toThrowErrorMatchingSnapshot",
               "toThrowErrorMatchingInlineSnapshot", "toMatchFileSnapshot", "currentTestName", "currentTest",
               "fullTitle", "titlePath", "getState"}
_CONTEXT_NAMES = ("name", "fullName", "title", "task")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_SEPARATORS = (" › ", " > ", " ")


class JavaScriptWriter(Writer):
    globs = tuple(f"**/{pattern}.{ext}" for ext in ("js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx")
                  for pattern in ("*.test", "*.spec", "__tests__/**/*", "test/**/*", "tests/**/*"))

    def needle(self, test_id: str) -> str | None:
        title = next((test_id.rsplit(sep, 1)[-1] for sep in _SEPARATORS[:2] if sep in test_id), None)
        if title is not None and _safe(title):
            return title.strip()
        # mocha's full title: where the describe titles end is unknown; a word of it will do
        safe = [w for w in (title or test_id).split() if _safe(w)]
        return max(safe, key=len) if safe else None

    def read(self, files: dict[str, str], ids: list[str]) -> Reading:
        return read(files)


def _safe(text: str) -> bool:
    """Written the same in the source whatever the quotes (no quote, backslash or `${`)."""
    return bool(text.strip()) and not re.search(r"['\"`\\]|\$\{", text)


def grammar_of(path: str) -> str | None:
    """The tree-sitter grammar of a JavaScript or TypeScript file, by its name."""
    return next((g for ext, g in _GRAMMARS.items() if path.endswith(ext)), None)


def read(files: dict[str, str]) -> Reading:
    reading = Reading(units=[], grammar={}, taken=set(), make=" ".join, gap="\n")
    for path, text in files.items():
        grammar = grammar_of(path)
        if grammar is None or (root := parse(grammar, text)) is None:
            continue
        reading.grammar[path] = grammar
        units: list[Unit] = []
        titles: list[str] = []
        _scope(path, root, [], "", units, titles)
        taint(units, _markers(root), "name-keyed")
        reading.units += units
        reading.taken.update(titles)
    return reading


def _scope(path: str, block: tree_sitter.Node, titles: list[str] | None, why_not: str,
           units: list[Unit], seen: list[str]) -> None:
    """The tests and describe blocks among the statements of `block` (titles: the describe
    path, None when a describe title is not a plain string)."""
    for statement in block.named_children:
        call = statement.named_children[0] if statement.type == "expression_statement" and statement.named_children else None
        if call is None or call.type != "call_expression":
            continue
        callee, args = call.child_by_field_name("function"), call.child_by_field_name("arguments")
        head, modifier = _callee(callee)
        if head is None or args is None or not args.named_children:
            continue
        title = _title(args.named_children[0])
        if title is not None:
            seen.append(title)
        path_titles = None if titles is None or title is None else [*titles, title]
        if head in _DESCRIBES:
            body = _function_body(args.named_children[1]) if len(args.named_children) > 1 else None
            if body is not None and body.type == "statement_block":
                _scope(path, body, path_titles, why_not or modifier, units, seen)
        elif head in _TESTS and path_titles is not None:
            units.append(_unit(path, statement, args, path_titles, why_not or modifier))


def _callee(node: tree_sitter.Node | None) -> tuple[str | None, str]:
    """`it` -> ("it", ""); `it.only` -> ("it", "modifier only"); anything else -> (None, "")."""
    if node is None:
        return None, ""
    if node.type == "identifier":
        return source(node), ""
    if node.type == "member_expression" and node.child_by_field_name("object").type == "identifier":
        return source(node.child_by_field_name("object")), f"modifier {source(node.child_by_field_name('property'))}"
    return None, ""


def _title(node: tree_sitter.Node) -> str | None:
    """A string or substitution-free template as the runner sees it; None for anything else."""
    if node.type not in ("string", "template_string"):
        return None
    parts = []
    for child in node.named_children:
        if child.type == "string_fragment":
            parts.append(source(child))
        elif child.type == "escape_sequence" and (decoded := _unescape(source(child))) is not None:
            parts.append(decoded)
        else:
            return None
    return "".join(parts)


def _unescape(escape: str) -> str | None:
    body = escape[1:]
    if len(body) == 1:
        return _ESCAPES.get(body, body if not body.isalnum() else None)
    if re.fullmatch(r"x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}", body):
        return chr(int(body[1:], 16))
    if re.fullmatch(r"u\{[0-9a-fA-F]+\}", body):
        return chr(int(body[2:-1], 16))
    return None


def _function_body(node: tree_sitter.Node) -> tree_sitter.Node | None:
    return node.child_by_field_name("body") if node.type in _FUNCTIONS else None


def _unit(path: str, statement: tree_sitter.Node, args: tree_sitter.Node, titles: list[str],
          why_not: str) -> Unit:
    *describes, title = titles
    name = args.named_children[0]
    quote = source(name)[0]

    def forms(new_title: str) -> list[str]:
        return [*(sep.join([*describes, new_title]) for sep in _SEPARATORS), new_title]

    unit = Unit(path=path, start=statement.start_byte, end=statement.end_byte, name=title,
                name_start=name.start_byte, name_end=name.end_byte, written=lambda t: quote + t + quote,
                forms=forms, why_not=why_not)
    fn = test_function(args)
    if fn is not None:
        first = _first_param(fn)
        param = _param_name(first) if first is not None else None
        if first is not None and param is None:
            unit.why_not = unit.why_not or "context parameter"  # vitest's ({ task }) and the like
        elif param is not None and _reads_name(fn, param):
            unit.why_not = unit.why_not or "reads its name"
        if _writes_outside(fn):
            unit.why_not = unit.why_not or "writes shared state"  # a copy would run it twice
        unit.sites = [site for call in reached_calls(fn) for site in _assertion_sites(call)]
    return unit


def test_function(args: tree_sitter.Node) -> tree_sitter.Node | None:
    """The function of a test call's arguments (`it("title", fn)`), if written in place."""
    fn = args.named_children[1] if len(args.named_children) > 1 else None
    return fn if fn is not None and fn.type in _FUNCTIONS else None


def _first_param(fn: tree_sitter.Node) -> tree_sitter.Node | None:
    params = fn.child_by_field_name("parameters") or fn.child_by_field_name("parameter")
    if params is not None and params.type == "formal_parameters":
        return next((c for c in params.named_children if c.type != "comment"), None)
    return params  # `done => ...`


def _writes_outside(fn: tree_sitter.Node) -> bool:
    """Whether `fn` assigns a variable it does not declare (state the tests after it read)."""
    declared = {source(n.child_by_field_name("name")) for n in walk(fn)
                if n.type in ("variable_declarator", "function_declaration")}
    declared |= {source(n) for n in walk(fn) if n.type == "identifier" and n.parent is not None
                 and n.parent.type in ("formal_parameters", "required_parameter", "optional_parameter")}
    for node in walk(fn):
        target = (node.child_by_field_name("left") if node.type in ("assignment_expression", "augmented_assignment_expression")
                  else node.child_by_field_name("argument") if node.type == "update_expression" else None)
        if target is not None and target.type == "identifier" and source(target) not in declared:
            return True
    return False


def _param_name(node: tree_sitter.Node) -> str | None:
    """The identifier a parameter binds (`done`, `t: TestContext`); None for a pattern."""
    if node.type == "identifier":
        return source(node)
    if node.type in ("required_parameter", "optional_parameter"):
        pattern = node.child_by_field_name("pattern")
        return source(pattern) if pattern is not None and pattern.type == "identifier" else None
    return None


def _reads_name(fn: tree_sitter.Node, param: str) -> bool:
    return any(n.type == "member_expression" and source(n.child_by_field_name("object")) == param
               and source(n.child_by_field_name("property")) in _CONTEXT_NAMES for n in walk(fn))


def _markers(root: tree_sitter.Node) -> list[tuple[int, int]]:
    found = []
    for node in walk(root):
        if node.type in ("identifier", "property_identifier") and source(node) in _NAME_KEYED:
            found.append((node.start_byte, node.end_byte))
        elif node.type == "member_expression" and node.child_by_field_name("object").type == "this" \
                and source(node.child_by_field_name("property")) == "test":
            found.append((node.start_byte, node.end_byte))  # mocha's this.test.title
    return found


def reached_calls(fn: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The calls a test function's own statements make whenever it runs to its end (`await`ed
    or not): its body's statements up to the first that may return or hands its callback
    (`done`) on."""
    body = fn.child_by_field_name("body")
    if body is None:
        return []
    first = _first_param(fn)
    param = _param_name(first) if first is not None else None
    statements = body.named_children if body.type == "statement_block" else [body]
    calls: list[tree_sitter.Node] = []
    for statement in statements:
        if statement.type == "comment":
            continue
        if _may_end(statement, param):
            break
        expression = statement.named_children[0] if statement.type == "expression_statement" else statement
        if expression is not None and expression.type == "await_expression":
            expression = expression.named_children[0]
        if expression is not None and expression.type == "call_expression":
            calls.append(expression)
    return calls


def _may_end(statement: tree_sitter.Node, param: str | None) -> bool:
    """A `return` of the test itself, or its callback (`done`) used, even in a nested function."""
    if param is not None and any(n.type == "identifier" and source(n) == param for n in walk(statement)):
        return True
    stack = [statement]
    while stack:
        node = stack.pop()
        if node.type == "return_statement":
            return True
        if node.type not in ("arrow_function", "function_expression", "function_declaration", "class_body"):
            stack.extend(node.children)
    return False


def _assertion_sites(call: tree_sitter.Node) -> list[Site]:
    callee = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments").named_children
    if callee is None or callee.type != "member_expression":
        return []
    method = source(callee.child_by_field_name("property"))
    target = callee.child_by_field_name("object")
    if method in _JEST_EQUALS and _is_expect(target) and len(args) == 1:
        return _literal_sites(args[0])
    if method in _THROWS and _is_expect(target) and len(args) == 1 and len(_title(args[0]) or "") >= 4:
        return [replace(_string_site(args[0]), exact=False)]  # a substring of the message
    if method in _CHAI_EQUALS and _chai_chain(target) and len(args) == 1:
        return _literal_sites(args[0])
    if method in _ASSERT_EQUALS and source(target) in ("assert", "assert.strict") and len(args) >= 2:
        return _literal_sites(args[0]) + _literal_sites(args[1])
    return []


def _is_expect(node: tree_sitter.Node) -> bool:
    return node.type == "call_expression" and source(node.child_by_field_name("function")) == "expect"


def _chai_chain(node: tree_sitter.Node) -> bool:
    """`expect(x).to.deep` and the like: only chai's words of no meaning (never `not`)."""
    while node.type == "member_expression":
        if source(node.child_by_field_name("property")) not in _CHAI_WORDS:
            return False
        node = node.child_by_field_name("object")
    return _is_expect(node)


def _literal_sites(node: tree_sitter.Node) -> list[Site]:
    kind = node.type
    if kind in ("parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression"):
        return _literal_sites(node.named_children[0]) if node.named_children else []
    if kind == "array":
        if any(c.type == "spread_element" for c in node.named_children):
            return []
        return [s for child in node.named_children for s in _literal_sites(child)]
    if kind == "object":
        members = [c for c in node.named_children if c.type != "comment"]
        keys = [source(c.child_by_field_name("key")) for c in members if c.type == "pair"]
        if any(c.type not in ("pair", "shorthand_property_identifier") for c in members) or len(set(keys)) < len(keys) \
                or any(c.child_by_field_name("key").type == "computed_property_name" for c in members if c.type == "pair"):
            return []  # a spread, a getter, a repeated or computed key: the value may not be what it reads
        return [s for c in members if c.type == "pair" for s in _literal_sites(c.child_by_field_name("value"))]
    if kind == "unary_expression" and source(node.child_by_field_name("operator")) in ("-", "+"):
        operand = node.child_by_field_name("argument")
        return _literal_sites(operand) if operand is not None and operand.type == "number" else []
    if kind == "number":
        return [_number_site(node)]
    if kind in ("string", "template_string"):
        return [_string_site(node)] if _title(node) is not None else []
    if kind in ("true", "false"):
        text = source(node)
        return [Site(node.start_byte, node.end_byte, lambda count, rng: [changed_bool(text)])]
    return []


def _number_site(node: tree_sitter.Node) -> Site:
    text = source(node)
    return Site(node.start_byte, node.end_byte,
                lambda count, rng: number_twins(text, count, rng))


def _string_site(node: tree_sitter.Node) -> Site:
    text = source(node)
    return Site(node.start_byte, node.end_byte,
                lambda count, rng: twin_quoted(text, 1, len(text) - 1, count, rng))


_WRITER = COPY_WRITERS.add("javascript", JavaScriptWriter())
COPY_WRITERS.add("typescript", _WRITER)
