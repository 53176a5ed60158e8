"""A canary: a test planted at verification, under a name drawn for this run, that must fail.

The `command` framework cannot copy hidden tests as pytest's controls do, but it can add one test
of its own next to them, in the task's language, that fails whatever the patch does. A report
in which that test did not fail is not a report of the tests having run: the code under test
exited before them (`os.Exit(0)` in an `init`, `process.exit` in a module), printed a runner's
lines for the tests it knows (`--- PASS: TestX`, `test x ... ok`), or wrote the report itself.
Its name is drawn anew for every verification from the words of the task's own test names, in
the language's style (`TestCheckRange`, `parse_quoted_lines`, `a range check`), and is in no
file the agent saw: a forger must look for it while the tests run, and then tell it from the
hidden tests and their copies (`copies/`), which are named the same way.

Each language's planter is root shell run in the repo before the tests: it finds a test file of
the repo's, writes the canary beside it in that file's package and style, and writes the name
the task's reader reports it under to `$CANARY` (nothing when the repo has no test file to stand
beside: the verdict then says there was no canary). Go plants one per package, a line each, with
the package after a tab: a package whose tests ran must report its own canary failed. `$CAMEL`,
`$SNAKE`, `$SNAKE2` and `$TITLE` are the drawn name's forms; `canary_names` draws them, and the
Go canary's failure line (`$ERRORF`). It fails as the task's own tests fail: through their test
library's assertion (JUnit's `assertEquals`, jest's `expect` or node's `assert`, Rust's
`assert_eq!`), or in Go with a line of the shapes Go tests print, drawn per verification, so that
a forger that keeps only the failures that read like a canary's keeps real ones too.
"""

from __future__ import annotations

import random
import shlex

from factory.records import Task
from factory.registry import Registry
from factory.verify.frameworks.copies.treesitter import draw_name, words

CANARIES: Registry[str] = Registry("canary language")
"""Root shell per language; the drawn name's forms are in its environment (`canary_names`),
`$CANARY` is the file to write the reported name to."""


GO_ERRORF = ['t.Errorf("got %d, want %d", got, want)', 't.Errorf("len(%q) = %d, want %d", "WORD", got, want)',
             't.Errorf("%q: got %d, want %d", "WORD", got, want)', 't.Errorf("unexpected result: got %v, want %v", got, want)',
             't.Fatalf("got %d, want %d", got, want)']
"""How the Go canary reports its failure, drawn per verification among the shapes Go tests print
most (`got X, want Y`): a forger that keeps only the failures that read like the canary's keeps
real tests' too. The other languages fail through their test library's own assertion, whose
message is every failing test's that uses it."""


def canary_names(task: Task, rng: random.Random) -> str:
    """Shell assignments of a name drawn from the words of the task's test ids, in each style a
    planter needs: CAMEL (`CheckRangeValue`), SNAKE and SNAKE2 (`check_range_value`, another for a
    module), TITLE (`check range value`); and what its body checks, so it reads as a test and
    not as a planted failure: WORD's length is asserted to be WRONG, in Go by ERRORF."""
    vocabulary = [w for w in words([*task.FAIL_TO_PASS, *task.PASS_TO_PASS]) if w not in ("test", "tests")]
    ids = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
    # a test's name, with its language's `test` word or without: the canary is `Test` + CAMEL in
    # Go, and one named like a real test is read as that test (a Go report names tests, not packages)
    parts = [words([part]) for test in ids for part in test.replace("::", "/").split("/")]
    taken = {*(w for test in ids for w in words([test])), *("_".join(ws) for ws in parts),
             *("_".join(w for w in ws if w not in ("test", "tests")) for ws in parts)}
    first = draw_name(vocabulary, lambda ws: "_".join(ws), taken, rng)
    second = draw_name(vocabulary, lambda ws: "_".join(ws), taken, rng)
    word = rng.choice(first.split("_"))
    forms = {"CAMEL": "".join(w.title() for w in first.split("_")), "SNAKE": first, "SNAKE2": second,
             "TITLE": first.replace("_", " "), "WORD": word, "WRONG": str(len(word) + rng.randint(1, 3)),
             "ERRORF": rng.choice(GO_ERRORF).replace("WORD", word)}
    return "; ".join(f"{key}={shlex.quote(value)}" for key, value in forms.items())


CANARIES.add("go", r"""
# one per package: each package's tests are a binary of their own, and code in one package can
# forge only its own binary's report. The line names the package too (the -json events' Package).
mod=$(sed -n 's/^module[[:space:]]*//p' go.mod 2>/dev/null | tr -d '"' | head -n 1)
find . -name '*_test.go' -not -path './vendor/*' -not -path '*/testdata/*' | sort | while read -r g; do
  d=$(dirname "$g")
  # a file that imports testing and names no build constraint, so the canary is built with the tests
  grep -qE '^[[:space:]]*(import[[:space:]]+)?"testing"' "$g" && ! grep -qE '^//(go:build|[[:space:]]*\+build) ' "$g" || continue
  grep -qs "func Test$CAMEL(" "$d"/*_test.go && continue  # planted in this package already (or taken)
  # in a test file the agent saw, among its tests: no new file or shape tells it apart
  printf '\nfunc Test%s(t *testing.T) {\n\tif got, want := len("%s"), %s; got != want {\n\t\t%s\n\t}\n}\n' \
    "$CAMEL" "$WORD" "$WRONG" "$ERRORF" >> "$g"
  rel=${d#./}; [ "$d" = . ] && package=$mod || package=$mod/$rel
  printf 'Test%s\t%s\n' "$CAMEL" "$package" >> "$CANARY"
done
""")

CANARIES.add("rust", r"""
for f in src/lib.rs src/main.rs; do
  if [ -f "$f" ]; then
    printf '\n#[cfg(test)]\nmod %s {\n    #[test]\n    fn %s() {\n        assert_eq!("%s".len(), %s);\n    }\n}\n' \
      "$SNAKE2" "$SNAKE" "$WORD" "$WRONG" >> "$f"
    echo "$SNAKE2::$SNAKE" > "$CANARY"
    break
  fi
done
""")

CANARIES.add("java", r"""
f=$(find . -path '*/test/*' -name '*Test.java' | sort | head -n 1)
if [ -n "$f" ]; then
  d=$(dirname "$f"); p=$(sed -n 's/^package \([A-Za-z0-9_.]*\).*/\1/p' "$f" | head -n 1)
  c="${CAMEL}Test"
  m=$(printf '%s' "$SNAKE2" | awk -F_ '{ printf "%s", $1; for (i = 2; i <= NF; i++) printf "%s", toupper(substr($i, 1, 1)) substr($i, 2) }')
  if grep -q 'org.junit.jupiter' "$f"; then at='@org.junit.jupiter.api.Test'; eq='org.junit.jupiter.api.Assertions.assertEquals'
  else at='@org.junit.Test'; eq='org.junit.Assert.assertEquals'; fi
  { [ -n "$p" ] && printf 'package %s;\n\n' "$p"
    printf 'public class %s {\n    %s\n    public void %s() {\n        %s(%s, "%s".length());\n    }\n}\n' \
      "$c" "$at" "$m" "$eq" "$WRONG" "$WORD"
  } > "$d/$c.java.new"
  [ -e "$d/$c.java" ] && rm -f "$d/$c.java.new" || { mv "$d/$c.java.new" "$d/$c.java"; echo "${p:+$p.}$c.$m()" > "$CANARY"; }
fi
""")

_JS = r"""
f=$(find . \( -name '*.test.js' -o -name '*.spec.js' -o -path './test/*.js' \) -not -path '*/node_modules/*' | sort | head -n 1)
if [ -n "$f" ]; then
  d=$(dirname "$f")
  if grep -q "node:test" "$f"; then head='const { test: it } = require("node:test");'; else head=''; fi
  # fails through the assertion the neighbouring tests use: jest's expect, else node's assert
  if grep -qE '[.](toBe|toEqual|toStrictEqual)[(]' "$f"; then check="expect(\"$WORD\".length).toBe($WRONG);"
  else check="require(\"assert\").strictEqual(\"$WORD\".length, $WRONG);"; fi
  out="$d/$(printf '%s' "$SNAKE" | tr _ -).test.js"
  if [ ! -e "$out" ]; then
    printf '%s\nit("%s", () => {\n  %s\n});\n' "$head" "$TITLE" "$check" > "$out"
    echo "$TITLE" > "$CANARY"
  fi
fi
"""
CANARIES.add("javascript", _JS)
CANARIES.add("typescript", _JS)
