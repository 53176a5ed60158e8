"""Blind checks in JavaScript and TypeScript: expected values that never enter the test process.

In node the code under test runs in the process that runs the tests, and that process can read
every hidden test (node reads a file to run it; `Function.prototype.toString` of a test gives
its source): a forger that reads them answers with what they expect. So in every FAIL_TO_PASS
test, its copies alike, each check of a statement the test always reaches against a literal of a
primitive is rewritten before the run (`plan`):

    assert.strictEqual(qs.stringify(o), 'a=1')   ->   __factory_seen__("9f0c2d1e", qs.stringify(o))
    assert.equal(5, n)                            ->   __factory_seen__("47aa01b3", n, 1)
    expect(parse('x')).not.toBe(null)             ->   __factory_seen__("c3d9e8f0", parse('x'))
    assert(count === 3)                           ->   __factory_seen__("0b7e44aa", count)

`__factory_seen__` is the sender (`jsblind_sender.js`), root's file in a folder the tests cannot
write. Under mocha and `node --test` root preloads it into every node process of the run; jest
runs each test file in a vm context of its own, with a module registry of its own, which a
preload does not reach, so there the rewritten file itself loads it by its absolute path as its
first statement, before anything of the project loads (`_loading`), and it defines the global in
that context. Either way it writes the value as plain data (its kind, and for a primitive its
value) to a file root reads after the run, and lets the test go on. The host keeps, per check id,
the test it belongs to, the literal (`jsvalues.literal`) and the comparison the assertion made
(`jsvalues.HOWS`), and judges (`judge`): a test its runner passed counts as passed only if each
of its blind checks sent exactly one value, equal as the assertion would have found it. The ids
are drawn at random, so the twins of a copied test differ in nothing a reader of the files can
see, and a forger that sends values must know them: extra, repeated or missing values fail.

What stays readable: checks against objects and arrays other than node's `deepStrictEqual` of a
literal of primitives (jest's `toEqual({a: 1})`, chai), checks
the test may not reach, and whatever the test writes elsewhere (its input, a message). Runners
that run tests in a realm or worker neither reaches (vitest, and a command that does not name
its runner: `npm test`) get no blind checks (`runner_of`). A test that counts its assertions
(`expect.assertions(n)`, `expect.hasAssertions()`) keeps its checks as they were: sent, they
would no longer count.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path

import tree_sitter

from factory.records import Task
from factory.verify import results
from factory.verify.frameworks import blindcheck
from factory.verify.frameworks.base import TRUSTED
from factory.verify.frameworks.blindcheck import Blind, fresh_id
from factory.verify.frameworks.copies import javascript, plant
from factory.verify.frameworks.copies.base import Copies
from factory.verify.frameworks.copies.treesitter import Edit, apply, parse, source, walk
from factory.verify.frameworks.jsvalues import CONVERTS, HOWS, JsValue, literal, sent, structure
from factory.verify.results.names import clean

SEEN = "__factory_seen__"
SENDER = f"{TRUSTED}/jsblind_sender.js"
"""Where root puts the sender: root's, read-only to the tests."""
SENDER_SOURCE = (Path(__file__).parent / "jsblind_sender.js").read_text()


class Reach(Enum):
    """How the sender reaches the tests' realm."""

    preloaded = "preloaded"
    """Root's NODE_OPTIONS preload (mocha, `node --test`: the tests run in node's main realm)."""
    required = "required"
    """The rewritten test file loads it first, by its absolute path (jest: a vm context per file).
    Not preloaded too: jest copies node's globals into each context by a getter that redefines the
    property on first use, which a read-only, non-configurable `__factory_seen__` refuses."""


@dataclass(frozen=True)
class BlindCheck:
    """What one blind check expects, on the host only."""

    test: str
    """The id its test is reported under in this run (a renamed original's or a copy's)."""
    how: str
    """Which comparison the assertion made (`jsvalues.HOWS`)."""
    expected: JsValue
    negated: bool = False
    """`notStrictEqual`, `.not.toBe`, `!==`: passes when the comparison does not hold."""
    where: str = ""
    """`file:line`, for the verdict."""

    def passes(self, value: JsValue) -> bool:
        return HOWS[self.how](value, self.expected) != self.negated


def runner_of(command: str) -> Reach | None:
    """How the sender reaches the tests the command runs; None when it may not: vitest runs test
    files in workers of its own, a command that sets NODE_OPTIONS itself drops the preload, and
    jest's native ESM mode (`--experimental-vm-modules`) has no `require`."""
    words = set(re.split(r"[\s/;&|()]+", command))
    if "vitest" in words or "experimental-vm-modules" in command:
        return None
    if "jest" in words:
        return Reach.required
    preloaded = words & {"mocha", "_mocha"} or ("node" in words and "--test" in words)
    return Reach.preloaded if preloaded and "NODE_OPTIONS" not in command else None


def planned(task: Task, files: dict[str, str], copies: Copies, rng: random.Random) -> Blind:
    """The blind checks of a `command` task's FAIL_TO_PASS tests and their copies, in the test
    files read back (`files`) as the copies left them; none for a runner the sender may not reach."""
    reach = runner_of(task.tests.command or "")
    if task.language not in ("javascript", "typescript") or reach is None:
        return Blind()
    return plan({**files, **copies.files}, [*plant.run_ids(copies, list(task.FAIL_TO_PASS)), *copies.copies], rng, reach)


def plan(files: dict[str, str], tests: list[str], rng: random.Random, reach: Reach = Reach.preloaded) -> Blind:
    """The blind checks of the tests reported under the ids `tests` (FAIL_TO_PASS originals under
    their run ids, and their copies), written into `files` (the test files as they will run)."""
    wanted = {clean(t): t for t in tests}
    blind = Blind(sender={SENDER: SENDER_SOURCE}, reads=_reads,
                  environment=f"NODE_OPTIONS=--require={SENDER}" if reach is Reach.preloaded else "")
    for path, text in files.items():
        grammar = javascript.grammar_of(path)
        root = parse(grammar, text) if grammar else None
        if root is None:
            continue
        asserts = _assert_bindings(root)
        edits: list[Edit] = []
        for unit in javascript.read({path: text}).units:
            test = next((wanted[clean(f)] for f in unit.forms(unit.name) if clean(f) in wanted), None)
            if test is None:
                continue
            statement = root.descendant_for_byte_range(unit.start, unit.end)
            call = statement.named_children[0] if statement.type == "expression_statement" else statement
            fn = javascript.test_function(call.child_by_field_name("arguments"))
            if fn is None or _counts_assertions(fn):
                continue
            for check in javascript.reached_calls(fn):
                found = _blind(check, asserts)
                if found is None:
                    continue
                actual, how, expected, negated = found
                check_id = fresh_id(blind.checks, rng)
                blind.checks[check_id] = BlindCheck(test, how, expected, negated, f"{path}:{check.start_point[0] + 1}")
                edits.append(Edit(check.start_byte, check.end_byte, _sending(check, actual, check_id, how)))
        if edits and reach is Reach.required:
            edits.append(_loading(root, grammar))
        if edits:
            new = apply(text, edits) + ("\ndeclare var __factory_seen__: any;\n" if grammar != "javascript" else "")
            if parse(grammar, new) is not None:
                blind.files[path] = new
            else:  # the grammar no longer reads it: run the file as it was
                blind.checks = {k: c for k, c in blind.checks.items() if not c.where.startswith(f"{path}:")}
    return blind


def _counts_assertions(fn: tree_sitter.Node) -> bool:
    """`expect.assertions(n)` or `expect.hasAssertions()` in the test: a check sent, not asserted,
    would not count."""
    return any(n.type == "member_expression" and source(n.child_by_field_name("object")) == "expect"
               and source(n.child_by_field_name("property")) in ("assertions", "hasAssertions") for n in walk(fn))


def _loading(root: tree_sitter.Node, grammar: str) -> Edit:
    """The sender loaded by the file's first statement, on the line it starts (line numbers stay):
    after a hashbang and the directives (`'use strict'` must stay first to count), before every
    import, since imports run before any other statement (and babel hoists their requires)."""
    first = next((n for n in root.named_children if n.type not in ("hash_bang_line", "comment") and not (
        n.type == "expression_statement" and n.named_child_count == 1 and n.named_children[0].type == "string")), None)
    at = first.start_byte if first is not None else root.end_byte
    esm = grammar != "javascript" or any(n.type == "import_statement" for n in root.named_children)
    return Edit(at, at, f'import "{SENDER}"; ' if esm else f'require("{SENDER}"); ')


def _sending(call: tree_sitter.Node, actual: tree_sitter.Node, check_id: str, how: str) -> str:
    """The call that sends `actual`, on as many lines as the assertion took (line numbers stay)."""
    lines = "\n" * (source(call).count("\n") - source(actual).count("\n"))
    converts = f", {CONVERTS[how]}" if how in CONVERTS else ""
    return f'{SEEN}("{check_id}", {source(actual)}{converts}{lines})'


_NODE_ASSERT = re.compile(r"""(?:node:)?assert(/strict)?""")


def _assert_bindings(root: tree_sitter.Node) -> dict[str, bool]:
    """Names bound to node's assert module in the file -> whether it is the strict one
    (`require('assert')`, `require('node:assert').strict`, `import assert from 'assert/strict'`,
    `import { strict as assert } from 'assert'`); chai's `assert` is not node's and is left alone."""
    found: dict[str, bool] = {}
    for node in walk(root):
        if node.type == "variable_declarator" and (name := node.child_by_field_name("name")) is not None \
                and name.type == "identifier" and (value := node.child_by_field_name("value")) is not None:
            strict = _required_assert(value)
            if strict is not None:
                found[source(name)] = strict
        elif node.type == "import_statement" and (module := node.child_by_field_name("source")) is not None:
            matched = _NODE_ASSERT.fullmatch(source(module)[1:-1])
            clause = next((c for c in node.named_children if c.type == "import_clause"), None)
            if matched is None or clause is None:
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    found[source(part)] = bool(matched[1])
                elif part.type == "namespace_import":
                    found[source(part.named_children[-1])] = bool(matched[1])
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        if spec.type == "import_specifier" and source(spec.child_by_field_name("name")) == "strict":
                            alias = spec.child_by_field_name("alias")
                            found[source(alias or spec.child_by_field_name("name"))] = True
    return found


def _required_assert(value: tree_sitter.Node) -> bool | None:
    """Whether `require('assert')`, `require('assert/strict')` or `require('assert').strict` is
    the strict assert (None: it is not node's assert)."""
    strict = False
    if value.type == "member_expression" and source(value.child_by_field_name("property")) == "strict":
        value, strict = value.child_by_field_name("object"), True
    if value.type != "call_expression" or source(value.child_by_field_name("function")) != "require":
        return None
    args = value.child_by_field_name("arguments").named_children
    matched = _NODE_ASSERT.fullmatch(source(args[0])[1:-1]) if len(args) == 1 and args[0].type == "string" else None
    return None if matched is None else strict or bool(matched[1])


_ASSERT_METHODS = {  # method -> (how in legacy mode, how in strict mode, negated)
    "strictEqual": ("is", "is", False), "notStrictEqual": ("is", "is", True),
    "deepStrictEqual": ("is", "is", False), "notDeepStrictEqual": ("is", "is", True),
    "equal": ("equal", "is", False), "notEqual": ("equal", "is", True),
    "deepEqual": ("deep-loose", "is", False), "notDeepEqual": ("deep-loose", "is", True),
}
_OPERATORS = {"===": ("strict", False), "!==": ("strict", True), "==": ("loose", False), "!=": ("loose", True)}
_EXPECT_METHODS = ("toBe", "toEqual", "toStrictEqual")  # Object.is on a primitive, in jest and vitest


def _blind(call: tree_sitter.Node, asserts: dict[str, bool]) -> tuple[tree_sitter.Node, str, JsValue, bool] | None:
    """(the actual value's expression, how it is compared, the expected literal, negated) of a
    check this module rewrites; None for any other call."""
    callee, args = call.child_by_field_name("function"), call.child_by_field_name("arguments").named_children
    if callee is None or any(a.type in ("spread_element", "comment") for a in args):
        return None
    if callee.type == "identifier" and source(callee) in asserts or \
            callee.type == "member_expression" and source(callee.child_by_field_name("property")) == "ok" \
            and _assert_object(callee.child_by_field_name("object"), asserts) is not None:
        # assert(a === LIT) / assert.ok(a == LIT, 'message')
        if not 1 <= len(args) <= 2 or not _plain_message(args[1:]) or args[0].type != "binary_expression":
            return None
        operator = source(args[0].child_by_field_name("operator"))
        if operator not in _OPERATORS:
            return None
        sides = _sides(args[0].child_by_field_name("left"), args[0].child_by_field_name("right"))
        how, negated = _OPERATORS[operator]
        return (sides[0], how, sides[1], negated) if sides else None
    if callee.type != "member_expression":
        return None
    method = source(callee.child_by_field_name("property"))
    target = callee.child_by_field_name("object")
    strict = _assert_object(target, asserts)
    if method in _ASSERT_METHODS and strict is not None:
        if not 2 <= len(args) <= 3 or not _plain_message(args[2:]):
            return None
        legacy, strict_how, negated = _ASSERT_METHODS[method]
        how = strict_how if strict else legacy
        if (sides := _sides(args[0], args[1])) is not None:
            return sides[0], how, sides[1], negated
        if "deep" in method.lower() and how == "is" and (sides := _sides(args[0], args[1], structure)) is not None:
            return sides[0], "deep-strict", sides[1], negated
        return None
    if method in _EXPECT_METHODS and len(args) == 1 and (expected := literal(args[0])) is not None:
        negated = target.type == "member_expression" and source(target.child_by_field_name("property")) == "not"
        subject = target.child_by_field_name("object") if negated else target
        if subject.type == "call_expression" and source(subject.child_by_field_name("function")) == "expect":
            inner = subject.child_by_field_name("arguments").named_children
            if len(inner) == 1 and inner[0].type != "spread_element" and literal(inner[0]) is None:
                return inner[0], "is", expected, negated
    return None


def _assert_object(node: tree_sitter.Node, asserts: dict[str, bool]) -> bool | None:
    """`assert` or `assert.strict` of node's assert module -> whether strict; None otherwise."""
    if node.type == "identifier" and source(node) in asserts:
        return asserts[source(node)]
    if node.type == "member_expression" and source(node.child_by_field_name("property")) == "strict" \
            and node.child_by_field_name("object").type == "identifier" and source(node.child_by_field_name("object")) in asserts:
        return True
    return None


def _sides(a: tree_sitter.Node, b: tree_sitter.Node, read=literal) -> tuple[tree_sitter.Node, JsValue] | None:
    """(the actual side, the expected literal) when exactly one side is a literal of a primitive
    (`read`: or an object or array literal of them)."""
    left, right = read(a), read(b)
    if (left is None) == (right is None):
        return None
    return (a, right) if right is not None else (b, left)


def _plain_message(rest: list[tree_sitter.Node]) -> bool:
    """No message, or one written as a plain string: dropping it runs no code."""
    return all(n.type in ("string", "template_string") and not any(c.type == "template_substitution" for c in n.named_children)
               for n in rest)


# -- judging, on the host ------------------------------------------------------------------------

def _reads(line: str) -> tuple[str, JsValue] | None:
    """`"id" TAB record`, as the sender writes it."""
    head, _, record = line.partition("\t")
    try:
        check_id = json.loads(head)
    except ValueError:
        return None
    value = sent(record)
    return (check_id, value) if isinstance(check_id, str) and value is not None else None


def judge(read: results.Results, blind: Blind, written: bytes | None) -> tuple[results.Results, dict[str, str], str | None]:
    """`blindcheck.judge` of node's values."""
    return blindcheck.judge(read, replace(blind, reads=_reads), written)
