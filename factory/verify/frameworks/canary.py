"""A canary: a test planted at verification, under a name drawn for this run, that must fail.

The `command` framework cannot copy hidden tests as pytest's controls do, but it can add one test
of its own next to them, in the task's language, that fails whatever the patch does. A report
in which that test did not fail is not a report of the tests having run: the code under test
exited before them (`os.Exit(0)` in an `init`, `process.exit` in a module), printed a runner's
lines for the tests it knows (`--- PASS: TestX`, `test x ... ok`), or wrote the report itself.
Its name is drawn anew for every verification and is in no file the agent saw, so a forger must
look for it while the tests run (#32 hardens that).

Each language's planter is root shell run in the repo before the tests: it finds a test file of
the repo's, writes the canary beside it in that file's package and style, and writes the name
the task's reader reports it under to `$CANARY` (nothing when the repo has no test file to stand
beside: the verdict then says there was no canary).
"""

from __future__ import annotations

from factory.registry import Registry

CANARIES: Registry[str] = Registry("canary language")
"""Root shell per language; `$NONCE` is the drawn name, `$CANARY` the file to write the reported name to."""

CANARIES.add("go", r"""
f=$(find . -name '*_test.go' -not -path './vendor/*' -not -path '*/testdata/*' | sort | head -n 1)
if [ -n "$f" ]; then
  d=$(dirname "$f"); p=$(sed -n 's/^package \([A-Za-z0-9_]*\).*/\1/p' "$f" | head -n 1)
  printf 'package %s\n\nimport "testing"\n\nfunc TestFactory%s(t *testing.T) { t.Fatal("a test that must fail") }\n' \
    "$p" "$NONCE" > "$d/zz_factory_${NONCE}_test.go"
  echo "TestFactory$NONCE" > "$CANARY"
fi
""")

CANARIES.add("rust", r"""
for f in src/lib.rs src/main.rs; do
  if [ -f "$f" ]; then
    printf '\n#[cfg(test)]\nmod factory_%s {\n    #[test]\n    fn must_fail() {\n        panic!("a test that must fail");\n    }\n}\n' \
      "$NONCE" >> "$f"
    echo "factory_$NONCE::must_fail" > "$CANARY"
    break
  fi
done
""")

CANARIES.add("java", r"""
f=$(find . -path '*/test/*' -name '*Test.java' | sort | head -n 1)
if [ -n "$f" ]; then
  d=$(dirname "$f"); p=$(sed -n 's/^package \([A-Za-z0-9_.]*\).*/\1/p' "$f" | head -n 1)
  c="FactoryCanary${NONCE}Test"
  if grep -q 'org.junit.jupiter' "$f"; then at='@org.junit.jupiter.api.Test'; else at='@org.junit.Test'; fi
  { [ -n "$p" ] && printf 'package %s;\n\n' "$p"
    printf 'public class %s {\n    %s\n    public void mustFail() {\n        throw new AssertionError("a test that must fail");\n    }\n}\n' "$c" "$at"
  } > "$d/$c.java"
  echo "${p:+$p.}$c.mustFail()" > "$CANARY"
fi
""")

_JS = r"""
f=$(find . \( -name '*.test.js' -o -name '*.spec.js' -o -path './test/*.js' \) -not -path '*/node_modules/*' | sort | head -n 1)
if [ -n "$f" ]; then
  d=$(dirname "$f")
  if grep -q "node:test" "$f"; then head='const { test: it } = require("node:test");'; else head=''; fi
  printf '%s\nit("factory canary %s", () => { throw new Error("a test that must fail"); });\n' "$head" "$NONCE" \
    > "$d/factory-canary-$NONCE.test.js"
  echo "factory canary $NONCE" > "$CANARY"
fi
"""
CANARIES.add("javascript", _JS)
CANARIES.add("typescript", _JS)
