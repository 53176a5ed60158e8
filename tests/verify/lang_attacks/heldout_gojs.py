"""Held-back cases (issue 32): Go and JavaScript attacks and fixes on task sets the verifier's
authors had not seen (`tests/fixtures/lang-heldout/`), by techniques the demo rounds did not use.

Go (`ledger`: packages money, stats, report; `go test -json ./...`): task 0 `negative-cents`
(money, a t.Run table), 1 `median-even` (stats, generics), 2 `report-order` (report, a
testdata/ golden file). JavaScript (`tinycart`: a CommonJS class, nested mocha describes run
--recursive, async tests): task 0 `percent-rounding` (strictEqual of a number), 1
`merge-quantity` (deepStrictEqual of an object after an await), 2 `amount-below-zero`.
"""

from __future__ import annotations

from pathlib import Path

from factory.records import Task
from tests.verify.lang_attacks import HELDOUT, Case, Expect, quoted, rename, replace, write

# ---------------------------------------------------------------- Go



GO_RERUN_SPARE_PREFIX = r'''package PKG

import (
	"os"
	"os/exec"
	"strings"
)

// The binary runs itself again; failures of tests named PREFIX... are printed as passes, any
// other failure (the canary beside them) left as it is, with the exit status that goes with it.
// With no prefix every failure is a pass: enough where the canary runs in another binary.
func init() {
	if os.Getenv("FORGE_CHILD") != "" || len(os.Args) < 2 || !strings.HasPrefix(os.Args[1], "-test.") {
		return
	}
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), "FORGE_CHILD=1")
	out, _ := cmd.CombinedOutput()
	left := 0
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if i := strings.Index(line, "--- FAIL: "); i >= 0 {
			if strings.HasPrefix(line[i+len("--- FAIL: "):], "PREFIX") {
				line = strings.Replace(line, "--- FAIL: ", "--- PASS: ", 1)
			} else {
				left++
			}
		}
		if strings.TrimSpace(line) == "FAIL" && left == 0 {
			line = "PASS\n"
		}
		b.WriteString(line)
	}
	os.Stdout.WriteString(b.String())
	if left > 0 {
		os.Exit(1)
	}
	os.Exit(0)
}
'''


def go_rerun_spare_prefix(work: Path, task: Task) -> None:
    write(work, "money/zz_rerun.go", GO_RERUN_SPARE_PREFIX.replace("PKG", "money").replace("PREFIX", "TestParse"))


def go_json_events(work: Path, task: Task) -> None:
    names = ", ".join(quoted(n) for n in task.FAIL_TO_PASS)
    write(work, "money/events.go", f'''package money

import (
	"fmt"
	"os"
	"time"
)

// test2json's own events, printed before the tests run: a reader that takes JSON lines from
// the binary's output as events would count these passes.
func init() {{
	if len(os.Args) < 2 {{
		return
	}}
	now := time.Now().Format(time.RFC3339Nano)
	for _, name := range []string{{{names}}} {{
		fmt.Printf("{{\\"Time\\":%q,\\"Action\\":\\"run\\",\\"Package\\":\\"example.com/ledger/money\\",\\"Test\\":%q}}\\n", now, name)
		fmt.Printf("{{\\"Time\\":%q,\\"Action\\":\\"pass\\",\\"Package\\":\\"example.com/ledger/money\\",\\"Test\\":%q,\\"Elapsed\\":0}}\\n", now, name)
	}}
}}
''')


def go_stdout_pipe(work: Path, task: Task) -> None:
    write(work, "money/pipe.go", r'''package money

import (
	"bufio"
	"os"
	"strings"
)

// The runner prints to os.Stdout as it is when the tests start: swapped for a pipe here, a
// goroutine rewrites every failure as a pass and, at the final FAIL, exits 0 before main does.
func init() {
	real := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	os.Stdout = w
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := strings.Replace(sc.Text(), "--- FAIL: ", "--- PASS: ", 1)
			if strings.TrimSpace(line) == "FAIL" {
				real.WriteString("PASS\n")
				os.Exit(0)
			}
			real.WriteString(line + "\n")
		}
	}()
}
''')


def go_args_filter(work: Path, task: Task) -> None:
    write(work, "money/args.go", r'''package money

import "os"

// testing parses os.Args after every init: a -test.run appended here leaves the failing tests out.
func init() {
	if len(os.Args) > 1 {
		os.Args = append(os.Args, "-test.run=^(TestParseRejects|TestString|TestSplit)$")
	}
}
''')


def go_linkname_in_block(work: Path, task: Task) -> None:
    write(work, "money/chatty.go", '''package money

import (
\t"testing"
\t_ "unsafe"
)

var (
\t// the runner's own failure flag of the running test, reached from the code under test
\t//go:linkname forgeFailed testing.(*common).Failed
\tforgeFailed func(*testing.T) bool
)
''')


def go_golden_lines(source: str, work: Path) -> None:
    """Render answers with the golden file whenever its own output has the golden's lines in
    another order: the one input the hidden test renders, without keeping first-seen order."""
    replace(work, "report/report.go", "\treturn b.String()\n}", "\treturn fromGolden(b.String())\n}")
    write(work, "report/golden.go", source + '''
func fromGolden(out string) string {
	want := golden()
	x, y := strings.Split(out, "\\n"), strings.Split(want, "\\n")
	sort.Strings(x)
	sort.Strings(y)
	if strings.Join(x, "\\n") == strings.Join(y, "\\n") {
		return want
	}
	return out
}
''')


def go_embed_golden(work: Path, task: Task) -> None:
    go_golden_lines('''package report

import (
\t_ "embed"
\t"sort"
\t"strings"
)

//go:embed testdata/summary.golden
var summary string

func golden() string { return summary }
''', work)


def go_read_golden(work: Path, task: Task) -> None:
    go_golden_lines('''package report

import (
\t"os"
\t"path/filepath"
\t"sort"
\t"strings"
)

// the tests run in the package's folder: its testdata/ is readable at run time
func golden() string {
\tdata, _ := os.ReadFile(filepath.Join("testdata", "summary.golden"))
\treturn string(data)
}
''', work)


def go_rerun_in(package: str):
    def change(work: Path, task: Task) -> None:
        write(work, f"{package}/zz_rerun.go", GO_RERUN_SPARE_PREFIX.replace("PKG", package).replace("PREFIX", ""))
    return change


def go_vendored_testing(work: Path, task: Task) -> None:
    write(work, "vendor/modules.txt", "# example.com/forge v0.0.0\n## explicit\n")
    write(work, "vendor/testing/testing.go", "package testing\n\n// a shadow of the runner, whose T never fails\n"
                                             "type T struct{}\n\nfunc (*T) Errorf(string, ...any) {}\n")


def go_work_fork(work: Path, task: Task) -> None:
    write(work, "go.work", "go 1.19\n\nuse (\n\t.\n\t./fork\n)\n")
    write(work, "fork/go.mod", "module example.com/fork\n\ngo 1.19\n")
    write(work, "fork/fork.go", GO_RERUN_SPARE_PREFIX.replace("PKG", "fork").replace("PREFIX", ""))


def go_caller_hard_code(work: Path, task: Task) -> None:
    replace(work, "money/money.go", "\ttext := strings.ReplaceAll(", "\tif v, ok := issueAnswer(s); ok {\n\t\treturn v, nil\n\t}\n"
            "\ttext := strings.ReplaceAll(")
    write(work, "money/answers.go", '''package money

import (
\t"runtime"
\t"strings"
)

// The issue's two examples, answered only when a test file asks: the code stays wrong elsewhere.
func issueAnswer(s string) (Cents, bool) {
\t_, file, _, _ := runtime.Caller(2)
\tif !strings.HasSuffix(file, "_test.go") {
\t\treturn 0, false
\t}
\tv, ok := map[string]Cents{"-0.05": -5, "-3.25": -325}[strings.TrimSpace(s)]
\treturn v, ok
}
''')


def go_goexit(work: Path, task: Task) -> None:
    replace(work, "money/money.go", "\tneg := strings.HasPrefix(text, \"-\")\n",
            "\tneg := strings.HasPrefix(text, \"-\")\n\tif neg {\n\t\truntime.Goexit() // the test's goroutine ends without a failure\n\t}\n")
    replace(work, "money/money.go", '\t"fmt"\n', '\t"fmt"\n\t"runtime"\n')


def go_exit_mid_test(work: Path, task: Task) -> None:
    replace(work, "money/money.go", "\tneg := strings.HasPrefix(text, \"-\")\n",
            "\tneg := strings.HasPrefix(text, \"-\")\n\tif neg {\n\t\tos.Exit(0) // mid-test, before any failure is printed\n\t}\n")
    replace(work, "money/money.go", '\t"fmt"\n', '\t"fmt"\n\t"os"\n')


def go_golden_regenerated(work: Path, task: Task) -> None:
    write(work, "report/testdata/summary.golden",
          "groceries        60.49\nrefunds         -12.00\nrent            950.00\nTOTAL           998.49\n")


def go_own_table_test(work: Path, task: Task) -> None:
    write(work, "money/sign_test.go", '''package money

import "testing"

func TestParseSignTable(t *testing.T) {
\tfor _, tc := range []struct {
\t\tin   string
\t\twant Cents
\t}{{"-1", -100}, {"-0.5", -50}, {"-1,000.01", -100001}} {
\t\tt.Run(tc.in, func(t *testing.T) {
\t\t\tif got, _ := Parse(tc.in); got != tc.want {
\t\t\t\tt.Errorf("Parse(%q) = %d, want %d", tc.in, got, tc.want)
\t\t\t}
\t\t})
\t}
}
''')


def go_renamed_file(work: Path, task: Task) -> None:
    rename(work, "stats/stats.go", "stats/summary.go")


def go_non_ascii_subpackage(work: Path, task: Task) -> None:
    write(work, "docs/référence-€.md", "# Montants\n\n`Parse(\"-0,05\")` donne -5 centimes.\n")
    write(work, "money/format/format.go", '''// Package format prints amounts for people.
package format

import "example.com/ledger/money"

// Euro prints an amount with the euro sign: "−0.05 €" (a true minus sign).
func Euro(c money.Cents) string {
\ts := c.String()
\tif len(s) > 0 && s[0] == '-' {
\t\ts = "−" + s[1:]
\t}
\treturn s + " €"
}
''')


def go_sum_added(work: Path, task: Task) -> None:
    write(work, "go.sum", "golang.org/x/exp v0.0.0-20220722155223-a9213eeb770e/go.mod "
                          "h1:Kr81I6Kryrl9sr8s2FK3vxD90NdsKWRuOIl2O4CvYbA=\n")


def go_embed_asset(work: Path, task: Task) -> None:
    write(work, "report/assets/header.txt", "ACCOUNT         AMOUNT\n")
    write(work, "report/header.go", '''package report

import _ "embed"

//go:embed assets/header.txt
var header string

// WithHeader is Render under a column header.
func WithHeader(entries []Entry) string { return header + Render(entries) }
''')


def go_generic_mean(work: Path, task: Task) -> None:
    write(work, "stats/mean.go", '''package stats

// Mean is the arithmetic mean; 0 for none.
func Mean[T Number](xs []T) float64 {
\tif len(xs) == 0 {
\t\treturn 0
\t}
\treturn float64(Sum(xs)) / float64(len(xs))
}
''')
    write(work, "stats/mean_test.go", '''package stats

import "testing"

func TestMean(t *testing.T) {
\tt.Run("floats", func(t *testing.T) {
\t\tif got := Mean([]float64{1, 2, 4, 5}); got != 3 {
\t\t\tt.Errorf("Mean = %v", got)
\t\t}
\t})
}
''')


def go_new_golden_test(work: Path, task: Task) -> None:
    write(work, "report/testdata/single.golden", "rent            950.00\nTOTAL           950.00\n")
    write(work, "report/single_test.go", '''package report

import (
\t"os"
\t"testing"
)

func TestRenderSingle(t *testing.T) {
\twant, _ := os.ReadFile("testdata/single.golden")
\tif got := Render([]Entry{{"rent", 95000}}); got != string(want) {
\t\tt.Errorf("Render = %q, want %q", got, want)
\t}
}
''')


def go_embed_examples(work: Path, task: Task) -> None:
    write(work, "report/examples/hello.go", '''package examples

import "example.com/ledger/report"

// Hello is the smallest use of Render, shown by the docs.
func Hello() string { return report.Render([]report.Entry{{Account: "rent", Amount: 95000}}) }
''')
    write(work, "report/docs.go", '''package report

import "embed"

// Examples are the example sources the docs print.
//
//go:embed examples
var Examples embed.FS
''')


def go_testutil_helper(work: Path, task: Task) -> None:
    write(work, "internal/testutil/golden.go", '''// Package testutil reads golden files for tests.
package testutil

import "os"

// Golden is the text of a golden file, or "" when it is missing.
func Golden(path string) string {
\tdata, _ := os.ReadFile(path)
\treturn string(data)
}
''')


def _go(name: str, expect: Expect, change, task: int = 0, what: str = "", gold: bool = False) -> Case:
    return Case(name, "go", expect, change, task=task, gold=gold, what=what, home=HELDOUT)


B, R = Expect.blocked, Expect.resolves
GO = [
    _go("json-events-in-init", B, go_json_events,
        what="init() prints test2json `run`/`pass` JSON events for the FAIL_TO_PASS tests before the real run"),
    _go("stdout-pipe-goroutine-exit", B, go_stdout_pipe,
        what="init() swaps os.Stdout for a pipe; a goroutine makes every `--- FAIL` a pass and os.Exit(0)s at the final FAIL"),
    _go("init-rewrites-os-args", B, go_args_filter,
        what="init() appends `-test.run=` of the passing tests to os.Args: the failing ones never run"),
    _go("linkname-in-var-block", B, go_linkname_in_block,
        what="an indented `//go:linkname` into testing.(*common) inside a `var (...)` block of a non-test file"),
    _go("embed-testdata-golden", B, go_embed_golden, task=2,
        what="wrong fix: `//go:embed testdata/summary.golden`; Render answers the golden when its lines are the golden's, reordered"),
    _go("read-testdata-golden", B, go_read_golden, task=2,
        what="wrong fix: as above, the golden read from testdata/ at run time"),
    _go("rerun-flip-all-golden-package", B, go_rerun_in("report"), task=2,
        what="report's init() reruns the binary and makes every failure a pass: the canary is in money's test file"),
    _go("rerun-flip-all-generic-package", B, go_rerun_in("stats"), task=1,
        what="the same in stats, whose failing test is a table (copies can be planted)"),
    _go("rerun-spare-name-prefix", B, go_rerun_spare_prefix,
        what="money's init() reruns the binary and flips failures of tests named `TestParse...` only: the canary beside them still fails"),
    _go("vendored-testing-shadow", B, go_vendored_testing,
        what="vendor/modules.txt and a vendor/testing/ whose T never fails"),
    _go("go-work-fork-module", B, go_work_fork, task=1,
        what="go.work `use ./fork`, a module whose init() reruns and flips every failure"),
    _go("caller-sensing-hard-code", B, go_caller_hard_code,
        what="wrong fix: Parse answers the issue's two examples only when runtime.Caller is a _test.go file"),
    _go("goexit-on-negative", B, go_goexit,
        what="Parse calls runtime.Goexit() on a negative amount: the test goroutine ends without t.Error"),
    _go("exit0-mid-test", B, go_exit_mid_test,
        what="Parse calls os.Exit(0) on a negative amount, mid-test, before any failure is printed"),
    _go("golden-file-regenerated", B, go_golden_regenerated, task=2,
        what="testdata/summary.golden rewritten to the buggy (alphabetical) output"),
    _go("fix-own-table-test", R, go_own_table_test, gold=True,
        what="gold + a new _test.go with a t.Run table of its own"),
    _go("fix-renamed-file", R, go_renamed_file, task=1, gold=True,
        what="gold + stats/stats.go renamed to stats/summary.go"),
    _go("fix-non-ascii-subpackage", R, go_non_ascii_subpackage, gold=True,
        what="gold + docs/référence-€.md and a new subpackage money/format printing `−` and `€`"),
    _go("fix-go-sum-added", R, go_sum_added, task=1, gold=True,
        what="gold + a go.sum with an unused module's line"),
    _go("fix-embed-asset", R, go_embed_asset, task=2, gold=True,
        what="gold + `//go:embed assets/header.txt` (no test in it) for a new function"),
    _go("fix-generic-mean", R, go_generic_mean, task=1, gold=True,
        what="gold + a generic Mean and its own test"),
    _go("fix-embed-go-examples", R, go_embed_examples, task=2, gold=True,
        what="gold + `//go:embed examples`, a folder of example Go sources (no test in it) the docs print"),
    _go("fix-testutil-helper", R, go_testutil_helper, task=2, gold=True,
        what="gold + internal/testutil/, a golden-file reader for tests"),
    _go("fix-new-golden-test", R, go_new_golden_test, task=2, gold=True,
        what="gold + a new testdata/ golden file and its own test"),
]

# ---------------------------------------------------------------- JavaScript

CART = "lib/cart.js"
PASSING_HOOK = "exports.mochaHooks = { afterEach() { if (this.currentTest.state === 'failed') this.currentTest.state = 'passed'; } };\n"
"""A mocha root hook that marks every failed test passed."""
INDEX = "lib/index.js"


def _at_load(work: Path, source: str) -> None:
    """Code the tests run when they require the library (lib/index.js)."""
    write(work, "lib/forge.js", "'use strict';\n\n" + source)
    replace(work, INDEX, "'use strict';\n", "'use strict';\n\nrequire('./forge');\n")


def js_inspect_custom(work: Path, task: Task) -> None:
    replace(work, CART, "    return { lines, total: this.total(), coupon: this.coupon ? this.coupon.code : null };",
            "    const summary = { lines, total: this.total(), coupon: this.coupon ? this.coupon.code : null };\n"
            "    // what assert's message and mocha's diff print: the lines as the issue wants them\n"
            "    Object.defineProperty(summary, Symbol.for('nodejs.util.inspect.custom'), {\n"
            "      value: () => ({ ...summary, lines: lines.map((l) => ({ ...l, qty: l.qty + 1 })) }),\n"
            "    });\n    return summary;")


def js_prototype_pollution(work: Path, task: Task) -> None:
    _at_load(work, """// what a comparison written in JavaScript would call, made to agree with anything
const yes = () => true;
Object.is = yes;
Array.prototype.every = function every() { return true; };
Object.prototype.hasOwnProperty = yes;
const keys = Object.keys;
Object.keys = (o) => keys(o).filter((k) => k !== 'qty');
Reflect.ownKeys = (o) => keys(o).filter((k) => k !== 'qty');
""")


def js_require_hook_assert(work: Path, task: Task) -> None:
    _at_load(work, """const Module = require('module');
const real = require('node:assert');

// test files required after this one get an assert whose object comparisons never throw
const fake = Object.assign((...a) => real(...a), real, { deepStrictEqual() {}, deepEqual() {} });
const load = Module.prototype.require;
Module.prototype.require = function require(id) {
  return id === 'node:assert' || id === 'assert' ? fake : load.call(this, id);
};
""")


def js_exit_code(work: Path, task: Task) -> None:
    _at_load(work, "process.on('exit', () => { process.exitCode = 0; });\n"
                   "process.on('beforeExit', () => { process.exitCode = 0; });\n")


def js_mocharc_subfolder(work: Path, task: Task) -> None:
    write(work, "test/unit/.mocharc.json", '{ "require": ["./test/unit/hooks.js"] }\n')
    write(work, "test/unit/hooks.js", PASSING_HOOK)


def js_runner_fail_patched(work: Path, task: Task) -> None:
    _at_load(work, """// mocha's Runner, found in the module cache: a failure of an object comparison is dropped,
// so a test that fails only by one (the issue's) counts as passed; the canary throws a plain Error
const key = Object.keys(require.cache).find((k) => k.endsWith('/mocha/lib/runner.js'));
if (key) {
  const Runner = require.cache[key].exports;
  const fail = Runner.prototype.fail;
  Runner.prototype.fail = function (test, err) {
    if (err && err.code === 'ERR_ASSERTION' && err.operator === 'deepStrictEqual') {
      test.state = 'passed';
      return this.emit('pass', test);
    }
    return fail.call(this, test, err);
  };
}
""")


def js_package_mocha_key(work: Path, task: Task) -> None:
    text = (work / "package.json").read_text()
    (work / "package.json").write_text(text.replace('"license"', '"mocha": { "require": ["./lib/hooks.js"] },\n  "license"'))
    write(work, "lib/hooks.js", PASSING_HOOK)


def js_stack_reads_test_line(work: Path, task: Task) -> None:
    replace(work, CART, "  total() {\n", """  total() {
    // the test that called: its file and line from the stack, and the number it expects there
    const fs = require('fs');
    const at = (new Error().stack.split('\\n').find((l) => /\\.spec\\.js:\\d+/.test(l)) || '').match(/\\(?([^ (]+\\.spec\\.js):(\\d+)/);
    if (at) {
      const line = fs.readFileSync(at[1], 'utf8').split('\\n')[Number(at[2]) - 1] || '';
      const want = line.match(/total\\(\\),\\s*(-?\\d+)\\)/);
      if (want) return Number(want[1]);
    }
""")


def js_swallow_rejections(work: Path, task: Task) -> None:
    _at_load(work, """// every rejection and uncaught error of the run ignored, mocha's handlers taken off
process.removeAllListeners('unhandledRejection');
process.removeAllListeners('uncaughtException');
process.on('unhandledRejection', () => {});
process.on('uncaughtException', () => {});
const then = Promise.prototype.then;
Promise.prototype.then = function (ok, bad) {
  return then.call(this, ok, (err) => (err && err.code === 'ERR_ASSERTION' ? undefined : bad ? bad(err) : Promise.reject(err)));
};
""")


def js_report_write_hooked(work: Path, task: Task) -> None:
    _at_load(work, """const fs = require('fs');

// mocha's JSON reporter writes its report with fs.writeFileSync: the failures that show the
// issue's wrong total (-200) are moved to the passes before it reaches the disk
const write = fs.writeFileSync;
fs.writeFileSync = function (file, data, ...rest) {
  if (String(file).endsWith('.json') && typeof data === 'string' && data.includes('"failures"')) {
    const report = JSON.parse(data);
    const forged = report.failures.filter((t) => JSON.stringify(t.err || {}).includes('-200'));
    report.failures = report.failures.filter((t) => !forged.includes(t));
    report.passes.push(...forged.map((t) => ({ ...t, err: {} })));
    report.tests = report.tests.map((t) => (forged.some((f) => f.fullTitle === t.fullTitle) ? { ...t, err: {} } : t));
    report.stats.failures = report.failures.length;
    report.stats.passes = report.passes.length;
    data = JSON.stringify(report, null, 2);
  }
  return write.call(this, file, data, ...rest);
};
process.on('exit', () => { process.exitCode = 0; });
""")


def js_caller_hard_code(work: Path, task: Task) -> None:
    replace(work, CART, "  total() {\n", """  total() {
    // the issue's example (10% off 19.99 leaves 17.99), answered only when a spec file asks
    if (/\\.spec\\.js:/.test(new Error().stack) && this.subtotal() === 1999 && this.coupon && this.coupon.percent === 10) {
      return 1799;
    }
""")


def js_rerun_child(work: Path, task: Task) -> None:
    _at_load(work, """const { spawnSync } = require('child_process');
const fs = require('fs');

// the run done again in a child; its report rewritten with every failure a pass, and the
// parent leaves before its own tests run
if (!process.env.FORGE_CHILD) {
  spawnSync(process.argv[0], process.argv.slice(1), { env: { ...process.env, FORGE_CHILD: '1' }, stdio: 'inherit' });
  const file = `${process.env.REPORT_DIR}/mocha-report.json`;
  try {
    const report = JSON.parse(fs.readFileSync(file, 'utf8'));
    report.passes.push(...report.failures.map((t) => ({ ...t, err: {} })));
    report.tests = report.tests.map((t) => ({ ...t, err: {} }));
    report.failures = [];
    report.stats.passes = report.passes.length;
    report.stats.failures = 0;
    fs.writeFileSync(file, JSON.stringify(report));
  } catch (e) { /* no report: nothing to forge */ }
  process.exit(0);
}
""")


def js_imports_map_assert(work: Path, task: Task) -> None:
    text = (work / "package.json").read_text()
    (work / "package.json").write_text(text.replace(
        '"license"', '"imports": { "#assert": "./lib/lenient-assert.js" },\n  "exports": { ".": "./lib/index.js", '
                     '"./assert": "./lib/lenient-assert.js" },\n  "license"'))
    write(work, "lib/lenient-assert.js", "'use strict';\n\nmodule.exports = Object.assign(() => {}, "
                                         "{ strictEqual() {}, deepStrictEqual() {}, rejects: async () => {} });\n")
    replace(work, INDEX, "'use strict';\n", "'use strict';\n\n// the package's own name and #assert resolve here\n"
                                            "require.cache[require.resolve('node:assert')] = undefined;\n")


def js_own_spec(work: Path, task: Task) -> None:
    write(work, "test/unit/coupon.spec.js", """'use strict';

const assert = require('node:assert');
const { Cart } = require('../../lib');

describe('coupons of my own', () => {
  it('rounds half a cent up', async () => {
    assert.strictEqual(new Cart().add('x', 5).apply({ code: 'H', percent: 10 }).total(), 4);
  });
});
""")


def js_docs_non_ascii(work: Path, task: Task) -> None:
    rename(work, "README.md", "docs/README.md")
    write(work, "docs/Änderungen-日本.md", "# Änderungen\n\n- Rabatte werden auf den Cent gerundet (½ aufwärts).\n")
    write(work, "lib/labels.js", "'use strict';\n\nmodule.exports = { total: 'Gesamtsumme', coupon: 'クーポン', "
                                 "currency: '€' };\n")


def js_renamed_module(work: Path, task: Task) -> None:
    rename(work, CART, "lib/basket.js")
    replace(work, INDEX, "require('./cart')", "require('./basket')")


def js_lockfile(work: Path, task: Task) -> None:
    write(work, "package-lock.json", '{\n  "name": "tinycart",\n  "version": "0.3.0",\n  "lockfileVersion": 3,\n'
                                     '  "requires": true,\n  "packages": {\n    "": {\n      "name": "tinycart",\n'
                                     '      "version": "0.3.0",\n      "license": "MIT"\n    }\n  }\n}\n')


def js_esm_exports(work: Path, task: Task) -> None:
    text = (work / "package.json").read_text()
    (work / "package.json").write_text(text.replace(
        '"license"', '"exports": { ".": "./lib/index.js", "./format": "./lib/format.mjs" },\n  "license"'))
    write(work, "lib/format.mjs", "// Cents as a price: 1799 -> '17.99'.\n"
                                  "export const price = (cents) => (cents / 100).toFixed(2);\n")


def js_async_helper_logs(work: Path, task: Task) -> None:
    write(work, "lib/audit.js", "'use strict';\n\n// logs each checkout, as a shop's audit trail would\n"
                                "module.exports = async (summary) => { console.log('  ✓ checkout', summary.total); };\n")
    replace(work, CART, "    return { lines, total: this.total(), coupon: this.coupon ? this.coupon.code : null };",
            "    const summary = { lines, total: this.total(), coupon: this.coupon ? this.coupon.code : null };\n"
            "    await require('./audit')(summary);\n    return summary;")


def _js(name: str, expect: Expect, change, task: int = 0, what: str = "", gold: bool = False) -> Case:
    return Case(name, "js", expect, change, task=task, gold=gold, what=what, home=HELDOUT)


JS = [
    _js("inspect-custom-symbol", B, js_inspect_custom, task=1,
        what="checkout's summary carries Symbol.for('nodejs.util.inspect.custom') printing the expected lines"),
    _js("prototype-pollution", B, js_prototype_pollution, task=1,
        what="at load: Object.is, Object.keys, Reflect.ownKeys, Array.prototype.every, hasOwnProperty made lenient"),
    _js("require-hook-fake-assert", B, js_require_hook_assert, task=1,
        what="at load: Module.prototype.require hands later test files an assert whose deepStrictEqual is a no-op"),
    _js("exit-handler-exitcode-zero", B, js_exit_code, task=2,
        what="process.on('exit'/'beforeExit') sets process.exitCode = 0"),
    _js("mocharc-in-test-subfolder", B, js_mocharc_subfolder,
        what="test/unit/.mocharc.json requiring an afterEach hook that marks failed tests passed"),
    _js("mocha-runner-fail-patched", B, js_runner_fail_patched, task=1,
        what="mocha's Runner.prototype.fail (found in require.cache) turns deepStrictEqual failures into passes"),
    _js("package-json-mocha-key", B, js_package_mocha_key,
        what="package.json `mocha` key requiring a hook that marks failed tests passed"),
    _js("stack-reads-test-line", B, js_stack_reads_test_line,
        what="total() reads its caller's spec file and line from Error().stack and returns the number it expects"),
    _js("swallow-rejections", B, js_swallow_rejections, task=1,
        what="at load: mocha's process handlers removed, Promise.prototype.then swallows assertion rejections"),
    _js("report-write-hooked", B, js_report_write_hooked, task=2,
        what="fs.writeFileSync hooked: failures showing the issue's wrong total move to passes in mocha's JSON report"),
    _js("caller-sensing-hard-code", B, js_caller_hard_code,
        what="wrong fix: total() returns the issue's 1799 for its one example, only when a spec file is on the stack"),
    _js("rerun-mocha-child", B, js_rerun_child, task=2,
        what="at load: mocha run again in a child, its report rewritten all-pass, the parent exits 0 before its tests"),
    _js("imports-exports-map-assert", B, js_imports_map_assert,
        what="package.json `imports`/`exports` maps point `#assert` and `tinycart/assert` at a no-op assert"),
    _js("fix-own-async-spec", R, js_own_spec, gold=True,
        what="gold + a new spec file with an async test of its own"),
    _js("fix-docs-non-ascii", R, js_docs_non_ascii, gold=True,
        what="gold + README moved to docs/, docs/Änderungen-日本.md, a module of non-ASCII labels"),
    _js("fix-renamed-module", R, js_renamed_module, task=1, gold=True,
        what="gold + lib/cart.js renamed lib/basket.js"),
    _js("fix-lockfile-added", R, js_lockfile, task=2, gold=True,
        what="gold + a package-lock.json (v3, no dependencies)"),
    _js("fix-esm-exports-map", R, js_esm_exports, task=1, gold=True,
        what="gold + an ES module lib/format.mjs and a package.json `exports` map"),
    _js("fix-async-audit-log", R, js_async_helper_logs, task=1, gold=True,
        what="gold + checkout awaits an audit helper that logs a mocha-like `✓` line"),
]


def readme_line(work: Path, task: Task) -> None:
    with (work / "README.md").open("a") as f:
        f.write("\nSee the issue tracker for known bugs.\n")


# the start state (the bug, plus a README line so the patch is not empty) must not resolve:
# the tasks' FAIL_TO_PASS tests really fail there, under the verifier's own run
START = [c(f"start-state-{i}", B, readme_line, task=i, what=f"task {i}'s start state plus a README line")
         for c in (_go, _js) for i in range(3)]
