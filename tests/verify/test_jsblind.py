"""Blind checks in JavaScript (`frameworks/jsblind.py`, `jsvalues.py`, `jsblind_sender.js`): which
checks are rewritten and how, the host's comparisons held to real node's on a few thousand pairs
of expected literal and actual value, and every demo-js and demo-jest task's gold fix run by mocha
or jest in its image with its copies and blind checks planted: every original passes, every copy fails."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from factory.records import TestStatus
from factory.verify.frameworks import jsblind
from factory.verify.frameworks.copies.base import COPY_WRITERS
from factory.verify.frameworks.copies.treesitter import parse
from factory.verify.frameworks.jsvalues import HOWS, JsValue, literal, sent
from factory.verify.results import read, status_of
from tests.verify.copies.realrun import TASKSETS, demo_tasks, gold_repo, plant

HOST_NODE = shutil.which("node")
IMAGE = "factory/node:1"
"""The demo-js tasks' image (node 18); the host's node may be another version."""


@pytest.fixture(params=[pytest.param("host", marks=pytest.mark.skipif(HOST_NODE is None, reason="no node on this machine")),
                        pytest.param("image", marks=pytest.mark.docker)])
def node(request, tmp_path) -> str:
    """A node to run scripts in `tmp_path` with: the host's, or the demo image's behind a wrapper."""
    if request.param == "host":
        return HOST_NODE
    wrapper = tmp_path / "node"
    wrapper.write_text(f"#!/bin/sh\nexec docker run --rm --network none --label factory.test=jsblind -v {tmp_path}:{tmp_path} "
                       f"-e FACTORY_BLIND_SEEN -e NODE_OPTIONS {IMAGE} node \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)
DEMO_REPO = Path(__file__).parents[2] / "pipelines/tasksets/demo-js/repos/qstring"

MOCHA = """\
'use strict';
const assert = require('node:assert');
const strict = require('assert').strict;
const { expect } = require('chai');

describe('parse', () => {
  it('reads numbers', () => {
    assert.strictEqual(parse('1'), 1);
    assert.equal(-0x1F, parse('x'), 'a message');
    strict.equal(parse('y'), 2n);
    assert.deepEqual(parse('z'), `two
lines`);
    assert.notStrictEqual(parse('w'), null);
    assert.ok(parse('v') === 'v');
    assert(parse('u') != undefined);
    expect(parse('t')).to.equal(3);
    assert.strictEqual(1, 1);
    assert.deepStrictEqual(parse('s'), { a: 1 });
    assert.strictEqual(parse('r'), 4, 'at ' + where);
  });
  it('stops at a return', (done) => {
    assert.strictEqual(parse('q'), 5);
    done();
    assert.strictEqual(parse('p'), 6);
  });
});
"""


def test_checks_against_primitive_literals_become_sends_and_nothing_else_does():
    blind = jsblind.plan({"test/parse.test.js": MOCHA}, ["parse reads numbers", "parse stops at a return"], random.Random(1))
    text = blind.files["test/parse.test.js"]
    assert text.count("\n") == MOCHA.count("\n")  # line numbers mean what they did
    sent_lines = [line.strip() for line in text.splitlines() if "__factory_seen__" in line]
    assert [re.sub(r'"[0-9a-f]{8}"', "ID", line) for line in sent_lines] == [
        "__factory_seen__(ID, parse('1'));",
        "__factory_seen__(ID, parse('x'), 1);",  # a loose check converts an object as `==` would
        "__factory_seen__(ID, parse('y'));",  # `assert.strict`'s equal is strictEqual
        "__factory_seen__(ID, parse('z'), 2",
        "__factory_seen__(ID, parse('w'));",
        "__factory_seen__(ID, parse('v'));",
        "__factory_seen__(ID, parse('u'), 1);",
        "__factory_seen__(ID, parse('s'), 3);",  # deepStrictEqual of an object literal: its own properties sent
        "__factory_seen__(ID, parse('q'));",  # before the test hands its callback on; `p` after it is not
    ]
    # chai's equal, two literals, a message that runs code: left as they were
    for kept in ("expect(parse('t')).to.equal(3)", "assert.strictEqual(1, 1)", "'at ' + where",
                 "assert.strictEqual(parse('p'), 6)"):
        assert kept in text
    checks = list(blind.checks.values())  # in source order
    assert [(c.how, c.expected, c.negated) for c in checks] == [
        ("is", JsValue("number", 1.0), False), ("equal", JsValue("number", -31.0), False),
        ("is", JsValue("bigint", 2), False), ("deep-loose", JsValue("string", "two\nlines"), False),
        ("is", JsValue("null"), True), ("strict", JsValue("string", "v"), False), ("loose", JsValue("undefined"), True),
        ("deep-strict", JsValue("object", {"a": JsValue("number", 1.0)}), False), ("is", JsValue("number", 5.0), False)]
    assert len(set(blind.checks)) == 9 and {c.test for c in checks} == {"parse reads numbers", "parse stops at a return"}


def test_jest_expectations_and_typescript_get_a_declaration():
    ts = ("import assert from 'node:assert/strict';\n\ntest('t', async () => {\n  expect(f()).toBe(-0);\n"
          "  expect(f()).not.toEqual(NaN);\n  await expect(g()).toStrictEqual('\\u{1F600}\\ud83d');\n"
          "  expect(h()).toBe(expect.anything());\n  assert.deepEqual(f(), 1.5e3);\n});\n")
    blind = jsblind.plan({"src/t.test.ts": ts}, ["t"], random.Random(2))
    text = blind.files["src/t.test.ts"]
    assert parse("typescript", text) is not None and text.endswith("declare var __factory_seen__: any;\n")
    assert "expect(h()).toBe(expect.anything())" in text
    values = [(c.how, c.expected, c.negated) for c in blind.checks.values()]
    assert values[0] == ("is", JsValue("number", -0.0), False) and values[1][2] is True
    assert values[2][1] == JsValue("string", "\U0001F600\ud83d") and values[3] == ("is", JsValue("number", 1500.0), False)


def test_copies_and_their_original_differ_only_in_drawn_ids():
    text = ("const assert = require('assert');\n\ndescribe('parse', () => {\n  it('reads numbers', () => {\n"
            "    assert.strictEqual(parse('1'), 17);\n    assert.equal(parse('2'), 'two');\n  });\n"
            "  it('reads words', () => {\n    assert.strictEqual(parse('w'), 'w');\n  });\n});\n")
    copies = COPY_WRITERS.get("javascript").plan({"test/p.test.js": text}, ["parse reads numbers"],
                                                  ["parse reads numbers"], random.Random(3))
    tests = [copies.renamed["parse reads numbers"], *copies.copies]
    blind = jsblind.plan(copies.files, tests, random.Random(4))
    out = blind.files["test/p.test.js"]
    bodies = [re.sub(r'"[0-9a-f]{8}"', "ID", m[1]) for m in re.finditer(r"(?s)it\('[^']*', \(\) => (\{.*?\n  \}\));", out)]
    assert len(bodies) == 5 and len(set(bodies)) == 2  # the twins read the same; the changed literal is on the host
    expected: dict[str, list[JsValue]] = {}
    for check in blind.checks.values():
        expected.setdefault(check.test, []).append(check.expected)
    assert set(expected) == set(tests) and len({tuple(v) for v in expected.values()}) == 4


LITERALS = [
    "0", "-0", "1", "-1", "17", "1.5", "-2.5e-3", ".5", "5.", "1e21", "1_000", "0x1F", "0XfF", "0b101", "0o17",
    "0.1", "9007199254740993", "1e400", "-1e400", "5e-324", "NaN", "Infinity", "-Infinity",
    "0n", "-5n", "10n", "0x10n", "123456789012345678901234567890n",
    "''", "'a'", '"5"', "' 12 '", "'0x10'", "'1e3'", "'Infinity'", "'-0'", "'\\x41\\u0042\\u{43}'", "'\\ud83d\\ude00'",
    "'\\ud800'", "'a\\\nb'", "`t\nx`", "'\\0'", "'true'", "'null'", "'10'", "' '", "'1n'", "'[object Object]'", "'() => 1'",
    "true", "false", "null", "undefined",
]
ACTUALS = [
    "0", "-0", "1", "-1", "17", "1.5", "0.5", "5", "1e21", "1000", "31", "255", "5", "15", "0.1", "9007199254740992",
    "Infinity", "-Infinity", "NaN", "5e-324", "0n", "-5n", "10n", "16n", "1n",
    "''", "'a'", "'5'", "' 12 '", "'12'", "'0x10'", "'+0x10'", "'1e3'", "'Infinity'", "'-0'", "'ABC'", "'\\ud83d\\ude00'",
    "'\\ud800'", "'ab'", "'t\\nx'", "'\\0'", "'1_000'", "'0b101'", "' \\n\\t'", "'10n'", "'10'", "'true'", "'1'",
    "true", "false", "null", "undefined",
    "[]", "[5]", "({})", "new Number(5)", "new String('a')", "({ valueOf() { return 17; } })",
    "({ toString() { return 'a'; } })", "({ [Symbol.toPrimitive]() { return 10n; } })", "({ valueOf() { return null; } })",
    "new Date(0)", "Symbol('s')", "(() => 1)", "Object.create(null)", "new Proxy({}, {})",
]


def test_the_host_compares_as_node_does(tmp_path, node):
    """Each actual value sent by the real sender, and compared on the host with each literal as
    it parses it, agrees with what node's own assertion (or operator) decides."""
    cases = ", ".join(f"() => ({a})" for a in ACTUALS)
    expectations = ", ".join(f"() => ({lit})" for lit in LITERALS)
    script = f"""'use strict';
const assert = require('assert');
const actuals = [{cases}];
const literals = [{expectations}];
const ok = (f) => {{ try {{ return f() !== false; }} catch (e) {{ return false; }} }};
const out = [];
actuals.forEach((a, j) => {{
  try {{ __factory_seen__('p' + j, a()); }} catch (e) {{}}
  try {{ __factory_seen__('c' + j, a(), 1); }} catch (e) {{}}
  try {{ __factory_seen__('f' + j, a(), 2); }} catch (e) {{}}
  out.push(literals.map((l) => ({{
    is: ok(() => assert.strictEqual(a(), l())), deep: ok(() => assert.deepStrictEqual(a(), l())),
    strict: ok(() => a() === l()), loose: ok(() => a() == l()), equal: ok(() => assert.equal(a(), l())),
    deepLoose: ok(() => assert.deepEqual(a(), l())), swapped: ok(() => assert.equal(l(), a())),
  }})));
}});
console.log(JSON.stringify(out));
"""
    (tmp_path / "t.js").write_text(script)
    (tmp_path / "sender.js").write_text(jsblind.SENDER_SOURCE)
    seen = tmp_path / "seen"
    done = subprocess.run([node, "--require", str(tmp_path / "sender.js"), str(tmp_path / "t.js")],
                          env={"FACTORY_BLIND_SEEN": str(seen)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    verdicts = json.loads(done.stdout)
    records = {}
    for line in seen.read_text().splitlines():
        head, _, record = line.partition("\t")
        records[json.loads(head)] = sent(record)
    expected = [literal(parse("javascript", f"x = {lit};\n").named_children[0].named_children[0].child_by_field_name("right"))
                for lit in LITERALS]
    assert None not in expected
    compared = 0
    for j, row in enumerate(verdicts):
        plain, converted, functions = records.get(f"p{j}"), records.get(f"c{j}"), records.get(f"f{j}")
        for i, decided in enumerate(row):
            lit = expected[i]
            host = {"is": HOWS["is"](plain, lit), "deep": HOWS["is"](plain, lit), "strict": HOWS["strict"](plain, lit),
                    "loose": converted is not None and HOWS["loose"](converted, lit),
                    "equal": converted is not None and HOWS["equal"](converted, lit),
                    "deepLoose": functions is not None and HOWS["deep-loose"](functions, lit),
                    "swapped": converted is not None and HOWS["equal"](converted, lit)}
            assert host == decided, (ACTUALS[j], LITERALS[i], host, decided)
            compared += len(host)
    assert compared > 20000 and sum(v for row in verdicts for c in row for v in c.values()) > 200


def test_the_sender_writes_what_the_test_computed_whatever_the_code_patched_after_it_loaded(tmp_path, node):
    (tmp_path / "sender.js").write_text(jsblind.SENDER_SOURCE)
    (tmp_path / "t.js").write_text("""
JSON.stringify = () => '"forged"';
Number.prototype.toString = () => '42';
Object.is = () => true;
Reflect.apply = () => undefined;
require('fs').writeSync = () => 0;
globalThis.__factory_seen__ = () => undefined;
try { Object.defineProperty(globalThis, '__factory_seen__', { value: () => undefined }); } catch (e) { console.log('refused'); }
__factory_seen__('a', 'real');
__factory_seen__('b', 7);
__factory_seen__('c', { toJSON() { return 'x'; }, valueOf() { return 1; } });
""")
    seen = tmp_path / "seen"
    done = subprocess.run([node, "--require", str(tmp_path / "sender.js"), str(tmp_path / "t.js")],
                          env={"FACTORY_BLIND_SEEN": str(seen)}, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "refused", done.stderr
    assert seen.read_text() == '"a"\tstring\t"real"\n"b"\tnumber\t7\n"c"\tobject\t\n'


def _results(statuses: dict[str, TestStatus]):
    from factory.verify.results.record import Case, Results
    return Results(cases=tuple(Case(id=t, status=s) for t, s in statuses.items()), exit_code=0)


def test_a_passed_test_fails_unless_each_blind_check_sent_one_equal_value():
    blind = jsblind.Blind(checks={
        "aaaa0001": jsblind.BlindCheck("t one", "is", JsValue("string", "x")),
        "aaaa0002": jsblind.BlindCheck("t two", "is", JsValue("number", 2.0)),
        "aaaa0003": jsblind.BlindCheck("t three", "is", JsValue("number", 3.0)),
        "aaaa0004": jsblind.BlindCheck("t four", "is", JsValue("null"), negated=True)})
    ran = _results({t: TestStatus.passed for t in ("t one", "t two", "t three", "t four")})
    written = b'"aaaa0001"\tstring\t"x"\n"aaaa0002"\tnumber\t2\n"aaaa0002"\tnumber\t2\n"aaaa0004"\tobject\t\n'
    judged, why, forged = jsblind.judge(ran, blind, written)
    assert forged is None
    assert {t: status_of(judged, t)[0] for t in ("t one", "t two", "t three", "t four")} == {
        "t one": TestStatus.passed, "t two": TestStatus.failed, "t three": TestStatus.failed, "t four": TestStatus.passed}
    assert "2 values" in why["t two"] and "0 values" in why["t three"]
    assert not judged.problems  # the runner's exit 0 is not held against the tests the host failed
    _, _, forged = jsblind.judge(ran, blind, written + b'"ffff0000"\tnumber\t1\n')
    assert forged and "no check of this run" in forged
    # an exit status that contradicts the runner's report still denies a pass, and the report still ran
    from dataclasses import replace
    contradicted, _, _ = jsblind.judge(replace(ran, exit_code=3), blind, written)
    assert contradicted.ran and [p.code.value for p in contradicted.problems] == ["exit_contradicts"]


def test_demo_reads_back_as_the_command_framework_plans():
    assert jsblind.runner_of(demo_tasks("demo-js")[4].tests.command) is jsblind.Reach.preloaded
    assert jsblind.runner_of(demo_tasks("demo-jest")[0].tests.command) is jsblind.Reach.required
    assert jsblind.runner_of("node --test test/") is jsblind.runner_of("./node_modules/.bin/mocha test/") is jsblind.Reach.preloaded
    assert jsblind.runner_of("npx jest --ci") is jsblind.runner_of("node_modules/.bin/jest") is jsblind.Reach.required
    for unreached in ("NODE_OPTIONS=--x mocha test/", "npx vitest run", "NODE_OPTIONS=--experimental-vm-modules npx jest", "npm test"):
        assert jsblind.runner_of(unreached) is None, unreached


JEST_FILES = {
    # 'use strict' stays the first statement (else the file leaves strict mode); the hashbang stays first
    "a.test.js": "#!/usr/bin/env node\n'use strict';\n// a comment\nconst f = require('./f');\n\n"
                 "test('t', () => {\n  expect(f()).toBe(1);\n});\n",
    # imports run before any other statement: the sender is imported before them
    "b.test.mjs": "import f from './f';\n\ntest('t', () => {\n  expect(f()).toBe(1);\n});\n",
    "c.test.ts": "import { f } from './f';\n\ntest('t', () => {\n  expect(f()).toBe(1);\n});\n",
}


@pytest.mark.parametrize("path", sorted(JEST_FILES))
def test_under_jest_each_file_with_checks_loads_the_sender_first(path):
    blind = jsblind.plan({path: JEST_FILES[path]}, ["t"], random.Random(6), jsblind.Reach.required)
    text = blind.files[path]
    assert text.count("\n") - text.endswith("declare var __factory_seen__: any;\n") * 2 == JEST_FILES[path].count("\n")
    grammar = "typescript" if path.endswith(".ts") else "javascript"
    first = next(n for n in parse(grammar, text).named_children if n.type not in ("hash_bang_line", "comment")
                 and not (n.type == "expression_statement" and n.named_children[0].type == "string"))
    assert jsblind.SENDER in first.text.decode() and len(blind.checks) == 1
    assert text.startswith("#!/usr/bin/env node\n'use strict';\n") if path == "a.test.js" else True
    # preloaded (mocha, node --test), a file loads nothing itself
    assert jsblind.SENDER not in jsblind.plan({path: JEST_FILES[path]}, ["t"], random.Random(6)).files[path]


def test_a_test_that_counts_its_assertions_keeps_its_checks():
    text = ("test('counted', () => {\n  expect.assertions(1);\n  expect(f()).toBe(1);\n});\n"
            "test('has', () => {\n  expect.hasAssertions();\n  expect(f()).toBe(1);\n});\n"
            "test('plain', () => {\n  expect(f()).toBe(1);\n});\n")
    blind = jsblind.plan({"t.test.js": text}, ["counted", "has", "plain"], random.Random(7), jsblind.Reach.required)
    assert [c.test for c in blind.checks.values()] == ["plain"]
    assert blind.files["t.test.js"].count("expect(f()).toBe(1)") == 2


@pytest.mark.docker
@pytest.mark.parametrize(("taskset", "index"), [*(("demo-js", i) for i in range(5)), *(("demo-jest", i) for i in range(4))])
def test_demo_gold_fix_passes_its_blind_checks_and_every_copy_fails(tmp_path, taskset, index):
    """Each gold fix run in its image by its own runner: mocha with the sender preloaded, jest
    (whose vm contexts no preload reaches) with the rewritten files loading it from root's folder."""
    task = demo_tasks(taskset)[index]
    work = gold_repo(tmp_path, taskset, task)
    copies = plant(work, COPY_WRITERS.get("javascript"), task, seed=index)
    files = {str(p.relative_to(work)): p.read_text() for p in work.rglob("*.test.js")}
    blind = jsblind.planned(task, files, copies, random.Random(index))
    for path, text in blind.files.items():
        (work / path).write_text(text)
    (tmp_path / "sender").mkdir()
    (tmp_path / "sender" / Path(jsblind.SENDER).name).write_text(jsblind.SENDER_SOURCE)
    preload = ["-e", blind.environment] if blind.environment else []
    image = json.loads((TASKSETS / taskset / "taskset.json").read_text())["base_image"]
    command = task.tests.command.replace("$REPORT_DIR", "/w/.report")
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", "--label", "factory.test=jsblind",
                           "-v", f"{work}:/w", "-v", f"{tmp_path / 'sender'}:{Path(jsblind.SENDER).parent}:ro", "-w", "/w",
                           *preload, "-e", "FACTORY_BLIND_SEEN=/w/.seen", image,
                           "sh", "-c", f"mkdir -p .report && {command}; cat .report/{task.tests.report}"],
                          capture_output=True, text=True, timeout=900)
    ran = read(task.tests.results, done.stdout, exit_code=None)
    judged, why, forged = jsblind.judge(ran, blind, (work / ".seen").read_bytes() if (work / ".seen").exists() else b"")
    assert forged is None
    # every hidden test and each of its copies has its checks blind (strings, numbers, objects of strings)
    assert {c.test for c in blind.checks.values()} == {*copies.copies, *(copies.renamed[t] for t in task.FAIL_TO_PASS)}
    for test_id in [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]:
        assert status_of(judged, copies.renamed.get(test_id, test_id))[0] is TestStatus.passed, (test_id, why)
    for copy in copies.copies:
        assert status_of(judged, copy)[0] is TestStatus.failed, copy


DEEP_LITERALS = [
    "{}", "{ a: 1 }", "{ a: '1', b: 'two' }", "[]", "[1, 2]", "['x', [1, { y: null }]]", "{ q: 'hello world', x: 'été' }",
    "{ n: -0 }", "{ n: 0 }", "{ n: NaN }", "[undefined]", "{ u: undefined }", "{ 'a b': [] }", "{ a: { b: { c: 1n } } }",
    "{ a: 1, b: undefined }", "[1, -0]", "{ tag: ['x', 'y', 'z'] }", "{ a: ['1', '2'] }", "{ a: 'x' }", "{ a: 'Object' }",
]
DEEP_ACTUALS = [
    *DEEP_LITERALS, "Object.create(null)", "Object.assign(Object.create(null), { a: 1 })", "[1, 2, 3]", "[1, , 2]",
    "Object.assign([1, 2], { extra: 1 })", "Object.defineProperty([1, 2], 'x', { value: 1 })",
    "Object.defineProperty({ a: 1 }, 'b', { value: 2 })", "({ a: 1, [Symbol('s')]: 2 })",
    "Object.defineProperty({ a: 1 }, Symbol('h'), { value: 1 })", "new (class A { constructor() { this.a = 1; } })()",
    "new Array(1)", "Array.from({ length: 2 }, (_, i) => i + 1)", "({ a: '1', b: 'two', c: undefined })",
    "({ a: 1n })", "({ a: new Number(1) })", "[[1, { y: null }]]", "new Map([['a', 1]])", "new Date(0)", "'{}'", "null",
    "({ length: 0 })", "(function () { return arguments; })()", "({ a: 1, [Symbol.toStringTag]: 'X' })",
    "({ q: 'hello world', x: '\\u00e9t\\u00e9' })", "({ q: 'hello world', x: 'e\\u0301te\\u0301' })", "Object.freeze({ a: 1 })",
    # read by running the project's code, as node's deepStrictEqual reads them: getters, a Proxy's traps
    "Object.defineProperty({}, 'a', { get() { return 1; }, enumerable: true })", "({ get q() { return 'hello world'; }, x: 'été' })",
    "({ a: 1, get b() { return undefined; } })", "({ get a() { return { get b() { return { c: 1n }; } }; } })",
    "Object.defineProperty({ a: 1 }, 'b', { get() { throw new Error('never read'); } })",  # not enumerable: node never calls it
    "Object.defineProperty({}, 'u', { set(v) {}, enumerable: true })", "Object.defineProperty([0, 2], '0', { get() { return 1; }, enumerable: true })",
    "new (class { get a() { return 1; } })()", "new Proxy({ a: 1 }, {})", "new Proxy([1, 2], {})", "new Proxy({ a: 1 }, { get: () => 'x' })",
    "new Proxy({ n: 0 }, { get: (t, k) => (k === 'n' ? -0 : t[k]) })", "new Proxy([1], { getPrototypeOf: () => Object.prototype })",
    "new Proxy({ a: 1, b: 2 }, { ownKeys: () => ['a'] })", "new Proxy(new Date(0), {})",
    # another prototype than the literal's: node reads nothing more of it
    "Object.defineProperty(new (class A {})(), 'a', { get() { throw new Error('never read'); }, enumerable: true })",
]
REFUSED_WHERE_NODE_TAKES = ["Object.defineProperty({ a: 1 }, Symbol.toStringTag, { get() { return 'Object'; } })",
                            "new Proxy({ a: 'Object' }, { get: () => 'Object' })"]
"""Values with a Symbol.toStringTag node reads as the plain object's: the blind check counts any tag
unequal to every literal (the safe side)."""


def test_deep_checks_against_object_and_array_literals_agree_with_node(tmp_path, node):
    actuals = ", ".join(f"() => ({a})" for a in [*DEEP_ACTUALS, *REFUSED_WHERE_NODE_TAKES])
    literals = ", ".join(f"() => ({lit})" for lit in DEEP_LITERALS)
    (tmp_path / "sender.js").write_text(jsblind.SENDER_SOURCE)
    (tmp_path / "t.js").write_text(f"""'use strict';
const assert = require('assert');
const actuals = [{actuals}];
const literals = [{literals}];
const ok = (f) => {{ try {{ f(); return true; }} catch (e) {{ return false; }} }};
console.log(JSON.stringify(actuals.map((a, j) => {{
  __factory_seen__('d' + j, a(), 3);
  return literals.map((l) => ok(() => assert.deepStrictEqual(a(), l())));
}})));
""")
    seen = tmp_path / "seen"
    done = subprocess.run([node, "--require", str(tmp_path / "sender.js"), str(tmp_path / "t.js")],
                          env={"FACTORY_BLIND_SEEN": str(seen)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    verdicts = json.loads(done.stdout)
    records = {json.loads(head): sent(record) for head, _, record in (line.partition("\t") for line in seen.read_text().splitlines())}
    from factory.verify.frameworks.jsvalues import structure
    expected = [structure(parse("javascript", f"x = {lit};\n").named_children[0].named_children[0].child_by_field_name("right"))
                for lit in DEEP_LITERALS]
    assert None not in expected
    for j, row in enumerate(verdicts):
        for i, verdict in enumerate(row):
            host = HOWS["deep-strict"](records[f"d{j}"], expected[i])
            if j >= len(DEEP_ACTUALS):
                assert not host  # a tag: unequal, where node may say equal
            else:
                assert host == verdict, ([*DEEP_ACTUALS, *REFUSED_WHERE_NODE_TAKES][j], DEEP_LITERALS[i], host, verdict)
    assert sum(map(sum, verdicts)) >= len(DEEP_LITERALS)


GETTERS = {
    # name: (a fresh result of `parseUrl`, whether the blind check takes it)
    "right": ("url({ a: '1' })", True),
    "wrong": ("url({ a: '2' })", False),
    "nested": ("{ get query() { return { get a() { calls++; return '1'; } }; }, host: 'h' }", True),
    "hidden-getter": ("Object.defineProperty(url({ a: '1' }), 'href', { get() { calls += 100; return 'x'; } })", True),
    "proxy": ("new Proxy({ query: { a: '1' }, host: 'h' }, {})", True),
    "wrong-behind-proxy": ("new Proxy({ query: { a: '1' }, host: 'h' }, { get: (t, k) => (k === 'host' ? 'g' : t[k]) })", False),
    # wrong on the first read, right after: the check's read is the first, as node's assertion's would be
    "wrong-then-right": ("changing([{ a: '2' }, { a: '1' }])", False),
    "right-then-wrong": ("changing([{ a: '1' }, { a: '2' }])", True),
    # a getter that knows the sender reads it can choose what is judged, never learn what passes
    "sensing": ("{ get query() { return /at tree \\(/.test(new Error().stack) ? { a: '2' } : { a: '1' }; }, host: 'h' }",
                False),
}


def test_a_getter_is_read_once_as_node_reads_it_and_a_wrong_value_behind_it_is_refused(tmp_path, node):
    """A deep check calls each enumerable getter of the value once, as node's deepStrictEqual does, and
    judges what it returned; a non-enumerable getter is never called; a getter that throws throws into
    the test, as out of the assertion, and sends nothing. The host takes exactly the values node takes,
    but where a getter answers the sender otherwise than node."""
    expected = "{ query: { a: '1' }, host: 'h' }"
    makers = ", ".join(f"{json.dumps(name)}: () => ({make})" for name, (make, _) in GETTERS.items())
    (tmp_path / "sender.js").write_text(jsblind.SENDER_SOURCE)
    (tmp_path / "t.js").write_text(f"""'use strict';
const assert = require('assert');
let calls = 0;
const url = (q) => ({{ get query() {{ calls++; return q; }}, host: 'h' }});
const changing = (answers) => {{ let n = 0; return {{ get query() {{ return answers[Math.min(n++, 1)]; }}, host: 'h' }}; }};
const makers = {{ {makers} }};
const out = {{}};
for (const [name, make] of Object.entries(makers)) {{
  let passed = true;
  try {{ assert.deepStrictEqual(make(), {expected}); }} catch (e) {{ passed = false; }}
  calls = 0;
  __factory_seen__(name, make(), 3);
  out[name] = {{ node: passed, calls }};
}}
try {{ __factory_seen__('throws', {{ get query() {{ throw new RangeError('lazy'); }}, host: 'h' }}, 3); }} catch (e) {{ out.throws = e.message; }}
try {{ assert.deepStrictEqual({{ get query() {{ throw new RangeError('lazy'); }}, host: 'h' }}, {expected}); }} catch (e) {{ out.nodeThrows = e.message; }}
console.log(JSON.stringify(out));
""")
    seen = tmp_path / "seen"
    done = subprocess.run([node, "--require", str(tmp_path / "sender.js"), str(tmp_path / "t.js")],
                          env={"FACTORY_BLIND_SEEN": str(seen)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out.pop("throws") == out.pop("nodeThrows") == "lazy"
    from factory.verify.frameworks.jsvalues import structure
    literal_value = structure(parse("javascript", f"x = {expected};\n").named_children[0].named_children[0].child_by_field_name("right"))
    names = [*GETTERS, "throws"]
    blind = jsblind.Blind(checks={name: jsblind.BlindCheck(name, "deep-strict", literal_value) for name in names})
    judged, why, forged = jsblind.judge(_results({name: TestStatus.passed for name in names}), blind, seen.read_bytes())
    assert forged is None
    host = {name: status_of(judged, name)[0] is TestStatus.passed for name in names}
    assert host == {**{name: takes for name, (_, takes) in GETTERS.items()}, "throws": False}, why
    assert "0 values" in why["throws"]  # the getter threw out of the check: nothing was sent
    # node takes the same values, and the sensing getter's too, which answers node otherwise than the sender
    assert {name: verdict["node"] for name, verdict in out.items()} == {name: host[name] or name == "sensing" for name in GETTERS}
    # each getter read once by the check; the one that is not enumerable never
    assert {name: verdict["calls"] for name, verdict in out.items()} == {
        "right": 1, "wrong": 1, "nested": 1, "hidden-getter": 1, "proxy": 0, "wrong-behind-proxy": 0,
        "wrong-then-right": 0, "right-then-wrong": 0, "sensing": 0}


def _lazy_query(wrong: bool):
    """The gold fix with parseUrl's `query` computed by an enumerable getter (the red team's
    `rt-fix-js-lazy-getter`); `wrong` adds a key to what it returns."""
    def change(work: Path, task) -> None:
        path = work / "lib/index.js"
        extra = " Object.assign({ lazy: 1 }, " if wrong else " ("
        text, n = re.subn(r"^(\s*)query: (.*),$", rf"\1get query() {{ return{extra}\2); }},", path.read_text(), count=1, flags=re.M)
        assert n == 1
        path.write_text(text)
    return change


@pytest.mark.docker
@pytest.mark.parametrize("wrong", [False, True], ids=["right", "wrong"])
async def test_a_fix_whose_result_has_a_getter_is_judged_by_what_the_getter_returns(tmp_path, wrong):
    """Under plain mocha the lazy `query` passes (deepStrictEqual calls the getter): so must it under
    the verifier, and the same getter returning a wrong object must not."""
    from tests.verify.lang_attacks import Case, Expect
    from tests.verify.lang_attacks.verdicts import judge
    await judge(Case(f"lazy-getter-{'wrong' if wrong else 'right'}", "demo-js", Expect.blocked if wrong else Expect.resolves,
                     _lazy_query(wrong), task=1, gold=True), tmp_path)

def test_no_plan_leaves_the_hidden_tests_expected_values_in_the_files():
    """What `js-reads-expected-at-run-time` reads (`qs.parse('QUERY'), EXPECTED);`, a hidden test's
    line) is in no file of any plan, original or twin: the original's place among them no longer matters."""
    files = {str(p.relative_to(DEMO_REPO)): p.read_text() for p in (DEMO_REPO / "test").glob("*.test.js")}
    whole = "\n".join(files.values())
    for task in demo_tasks("demo-js"):
        hidden = []
        for test_id in task.FAIL_TO_PASS:
            body = whole[whole.index(f"it('{test_id.split(' ', 1)[1]}'"):]
            hidden += [line.strip() for line in body[:body.index("\n  });")].splitlines()[1:]]
        assert hidden
        for seed in range(40):
            copies = COPY_WRITERS.get("javascript").plan(files, list(task.FAIL_TO_PASS),
                                                          [*task.FAIL_TO_PASS, *task.PASS_TO_PASS], random.Random(seed))
            blind = jsblind.planned(task, files, copies, random.Random(seed))
            planted = "\n".join({**files, **copies.files, **blind.files}.values())
            assert not any(line in planted for line in hidden), (task.instance_id, seed)


def test_an_esm_node_test_file_sends_its_blind_values_from_the_child_process(tmp_path, node):
    """`node --test` runs each file in a child process: the preload reaches it through NODE_OPTIONS,
    and ES module code finds the global sender."""
    source = ("import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n\n"
              "const half = (n) => n / 2;\n\ntest('halves', () => {\n  assert.equal(half(3), 1.5);\n"
              "  assert.deepEqual(half(-0), -0);\n  assert.deepStrictEqual([half(2), `${half(4)}`], [1, '2']);\n});\n")
    blind = jsblind.plan({"t.test.mjs": source}, ["halves"], random.Random(5))
    (tmp_path / "t.test.mjs").write_text(blind.files["t.test.mjs"])
    (tmp_path / "sender.js").write_text(jsblind.SENDER_SOURCE)
    seen = tmp_path / "seen"
    done = subprocess.run([node, "--test", str(tmp_path / "t.test.mjs")], capture_output=True, text=True, timeout=120,
                          env={"FACTORY_BLIND_SEEN": str(seen), "NODE_OPTIONS": f"--require={tmp_path / 'sender.js'}",
                               "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert [c.how for c in blind.checks.values()] == ["is", "is", "deep-strict"]
    judged, why, forged = jsblind.judge(_results({"halves": TestStatus.passed}), blind, seen.read_bytes())
    assert forged is None and not why and status_of(judged, "halves")[0] is TestStatus.passed
    # the same values judged against other expectations fail the test
    wrong = jsblind.plan({"t.test.mjs": source.replace("1.5", "1.25")}, ["halves"], random.Random(5))
    _, why, _ = jsblind.judge(_results({"halves": TestStatus.passed}), wrong, seen.read_bytes())
    assert "sent a value the assertion would refuse" in why["halves"]
