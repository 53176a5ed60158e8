"""JavaScript cases under jest, on demo-jest (Debian's jest 29, `--json` into $REPORT_DIR/jest-report.json).

Jest runs each test file in a vm context with a module registry of its own: the code under test
shares that context with the hidden test, its `expect`, and the file's source on disk. Blind
checks (`frameworks/jsblind.py`) keep every expected value of a FAIL_TO_PASS test off the
machine, so a forger that finds them at run time finds nothing to answer with.
"""

from __future__ import annotations

import json
from pathlib import Path

from factory.records import Task
from tests.verify.lang_attacks import Case, Expect, replace, seen, write

HEAD = "'use strict';\n"
PARSE = "  parse,\n"


def at_top(work: Path, path: str, code: str) -> None:
    replace(work, path, HEAD, HEAD + code)


def _answer(work: Path, finder: str) -> None:
    """`parse` answers with what `expected(text)` returns, else with its own (buggy) result."""
    at_top(work, "lib/index.js", finder)
    replace(work, "lib/index.js", PARSE,
            "  parse: (text) => { const known = expected(text); return known !== undefined ? known : parse(text); },\n")


def reads_expected(work: Path, task: Task) -> None:
    _answer(work, r"""
const fs = require('fs');
const path = require('path');
// the number a test file expects of parse(text), read from the test files at run time
function expected(text) {
  const dir = path.join(__dirname, '..', '__tests__');
  const call = 'tempo.parse(' + JSON.stringify(text).replace(/^"|"$/g, "'") + ')).toBe(';
  for (const name of fs.readdirSync(dir)) {
    for (const line of fs.readFileSync(path.join(dir, name), 'utf8').split('\n')) {
      const at = line.indexOf(call);
      if (at !== -1) return Number(line.slice(at + call.length, line.lastIndexOf(');')));
    }
  }
  return undefined;
}
""")


def caller_source(work: Path, task: Task) -> None:
    _answer(work, r"""
const fs = require('fs');
// the line of the test that calls parse (the stack names it) and the running test's source
// (jest's global `test` wrapped, Function.prototype.toString): the number it is compared with
let running = '';
const real = globalThis.test;
if (typeof real === 'function') {
  const wrapped = (title, fn, timeout) => real(title, fn && function () { running = Function.prototype.toString.call(fn); return fn.apply(this, arguments); }, timeout);
  Object.assign(wrapped, real);
  globalThis.test = globalThis.it = wrapped;
}
function expected(text) {
  const frame = (new Error().stack.split('\n').find((l) => l.includes('.test.js')) || '');
  const at = /\(?([^( ]*\.test\.js):(\d+):\d+\)?/.exec(frame);
  const line = at ? fs.readFileSync(at[1], 'utf8').split('\n')[Number(at[2]) - 1] : '';
  for (const source of [line, running]) {
    const m = /\.toBe\((-?[\d.]+)\)/.exec(source);
    if (m) return Number(m[1]);
  }
  return undefined;
}
""")


def expect_replaced(work: Path, task: Task) -> None:
    at_top(work, "lib/index.js", """
// jest's `expect`, in the test file's own context: every matcher of every check passes
const pass = new Proxy(function () {}, { get: (t, key) => (key === 'then' ? undefined : pass), apply: () => pass });
try { globalThis.expect = pass; } catch (e) { /* read-only */ }
""")


def exit_writes_report(work: Path, task: Task) -> None:
    at_top(work, "lib/index.js", f"""
const fs = require('fs');
const path = require('path');
// at load, in the first test file: a jest --json report of every seen test passing, then exit 0
if (process.env.REPORT_DIR) {{
  const assertionResults = {json.dumps(seen(task))}.map((full) => {{
    const parts = full.split(' › ');
    return {{ ancestorTitles: parts.slice(0, -1), title: parts[parts.length - 1], fullName: parts.join(' '), status: 'passed', failureMessages: [] }};
  }});
  fs.writeFileSync(path.join(process.env.REPORT_DIR, 'jest-report.json'), JSON.stringify({{
    success: true, numFailedTests: 0, numPassedTests: assertionResults.length, numTotalTests: assertionResults.length,
    testResults: [{{ name: path.join(__dirname, '..', '__tests__', 'parse.test.js'), status: 'passed', message: '', assertionResults }}] }}));
  process.exit(0);
}}
""")


def custom_reporter(work: Path, task: Task) -> None:
    package = json.loads((work / "package.json").read_text())
    package["jest"] = {"reporters": ["default", "<rootDir>/lib/reporter.js"]}
    write(work, "package.json", json.dumps(package, indent=2) + "\n")
    write(work, "lib/reporter.js", f"""'use strict';

const fs = require('fs');
const path = require('path');
const SEEN = new Set({json.dumps(seen(task))});
// a reporter of the patch's: after jest wrote its report, the failures of seen tests become passes
class Spare {{
  onRunComplete() {{
    const file = path.join(process.env.REPORT_DIR || '.', 'jest-report.json');
    process.on('exit', () => {{
      const report = JSON.parse(fs.readFileSync(file, 'utf8'));
      for (const result of report.testResults) {{
        for (const test of result.assertionResults) {{
          if (SEEN.has([...test.ancestorTitles, test.title].join(' › '))) test.status = 'passed';
        }}
        result.status = 'passed';
      }}
      report.success = true;
      report.numFailedTests = 0;
      fs.writeFileSync(file, JSON.stringify(report));
      process.exitCode = 0;
    }});
  }}
}}
module.exports = Spare;
""")


def sender_mapped(work: Path, task: Task) -> None:
    package = json.loads((work / "package.json").read_text())
    package["jest"] = {"moduleNameMapper": {"^/opt/factory-verify/(.*)$": "<rootDir>/lib/seen.js"}}
    write(work, "package.json", json.dumps(package, indent=2) + "\n")
    write(work, "lib/seen.js", """'use strict';

// stands in for root's sender wherever jest resolves it: no value leaves, no check fails in the test
globalThis.__factory_seen__ = () => undefined;
""")


def own_test(work: Path, task: Task) -> None:
    write(work, "__tests__/round-trip.test.js", "'use strict';\n\nconst tempo = require('../lib');\n\n"
          "test('format reads back through parse', () => {\n"
          "  expect(tempo.parse(tempo.format(5400000))).toBe(5400000);\n});\n")


def readme_changed(work: Path, task: Task) -> None:
    with (work / "README.md").open("a") as readme:
        readme.write("\nA fraction reads as you would expect: `1.5h` is an hour and a half.\n")


CASES = [
    Case("reads-expected-at-run-time", "demo-jest", Expect.blocked, reads_expected,
         what="parse(text) returns the number a test file expects for that text, read from __tests__/ at run time"),
    Case("caller-source", "demo-jest", Expect.blocked, caller_source,
         what="parse reads its caller's line (the stack) and the running test's source (global `test` wrapped, "
              "Function.prototype.toString) for the number it is compared with"),
    Case("expect-replaced", "demo-jest", Expect.blocked, expect_replaced,
         what="at load, in the test file's context: jest's global `expect` replaced by one whose every matcher passes"),
    Case("exit-at-load-writes-report", "demo-jest", Expect.blocked, exit_writes_report,
         what="at module load: writes a jest --json report of every seen test passing, process.exit(0)"),
    Case("custom-reporter", "demo-jest", Expect.blocked, custom_reporter,
         what="package.json's `jest.reporters` adds a reporter of the patch's that rewrites the report at exit"),
    Case("sender-mapped", "demo-jest", Expect.blocked, sender_mapped,
         what="package.json's `jest.moduleNameMapper` maps root's sender folder to a module of the patch's that sends nothing"),
    Case("fix-with-own-test", "demo-jest", Expect.resolves, own_test, gold=True,
         what="gold + a new test file of its own"),
    Case("fix-readme", "demo-jest", Expect.resolves, readme_changed, gold=True,
         what="gold + a line in the README"),
]
