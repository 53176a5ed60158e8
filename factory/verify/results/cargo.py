"""`cargo test` console output: libtest's lines, over every test binary and the doc-tests.

    Running unittests src/lib.rs (target/debug/deps/adder-92948b65e88960b4)
    running 2 tests
    test tests::another ... FAILED
    test tests::exploration ... ok
    test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; ...

Text is forgeable: a test run with `--nocapture` (or printing to stderr) can print
`test other ... ok`; structured reports (nextest's JUnit) come first. Two guards stand here
anyway: result lines count only at the start of a line and between a binary's `running N
tests` and its `test result:`, and never inside the `failures:` section, where libtest
replays the captured stdout of failed tests. A binary that announced tests and ended without
its summary crashed (`suite_failed`); compiler errors are `build_failed`.
"""

from __future__ import annotations

import re

from factory.records import TestStatus
from factory.verify.results.names import clean, strip_ansi
from factory.verify.results.record import Case, Counts, Problem, ProblemCode, Results

_RUNNING_BINARY = re.compile(r"^\s*(Running|Doc-tests)\s+(.+?)\s*$")
_RUNNING_N = re.compile(r"^running (\d+) tests?$")
_TEST = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored|bench)\b")
_RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")
_COMPILE_ERROR = re.compile(r"^error(\[E\d+\]: .+|: could not compile .+)")
_STATUS = {"ok": TestStatus.passed, "bench": TestStatus.passed, "FAILED": TestStatus.failed,
           "ignored": TestStatus.skipped}


def read_cargo(text: str) -> Results:
    cases: list[Case] = []
    found: list[Problem] = []
    binary, in_binary, in_failures = "", False, False
    claimed = [0, 0, 0, 0]  # total, passed, failed, ignored
    summaries = 0
    for raw in text.splitlines():
        line = strip_ansi(raw).rstrip()
        if m := _RUNNING_BINARY.match(line):
            if in_binary:
                found.append(Problem(ProblemCode.suite_failed, f"{binary} ended without its summary"))
            binary = _binary_name(m.group(1), m.group(2))
            in_binary = in_failures = False
        elif m := _RUNNING_N.match(line):
            in_binary, in_failures = True, False
            claimed[0] += int(m.group(1))
        elif line == "failures:":
            in_failures = True
        elif m := _RESULT.match(line):
            in_binary = in_failures = False
            summaries += 1
            for i, n in enumerate(m.groups(), start=1):
                claimed[i] += int(n)
        elif in_binary and not in_failures and (m := _TEST.match(line)):
            cases.append(_case(m.group(1), _STATUS[m.group(2)], binary))
        elif not in_binary and (m := _COMPILE_ERROR.match(line)):
            found.append(Problem(ProblemCode.build_failed, m.group(0)))
    if in_binary:
        found.append(Problem(ProblemCode.suite_failed, f"{binary or 'a test binary'} ended without its summary"))
    claim = Counts(total=claimed[0], passed=claimed[1], failed=claimed[2], skipped=claimed[3]) if summaries else None
    return Results(cases=tuple(cases), claimed=claim, found=tuple(_once(found)), structured=False)


def _binary_name(kind: str, rest: str) -> str:
    # `unittests src/lib.rs (target/debug/deps/adder-1082c4b0)` -> `unittests src/lib.rs`
    rest = re.sub(r"\s*\(.*\)$", "", rest)
    return f"Doc-tests {rest}" if kind == "Doc-tests" else rest


def _case(name: str, status: TestStatus, binary: str) -> Case:
    # `tests::it_panics - should panic`: the path is the id, the whole line's name (SWE-smith's
    # key) an alias.
    full, bare = clean(name), clean(name.removesuffix(" - should panic"))
    return Case(bare, status, suite=binary, aliases=(full,) if full != bare else ())


def _once(problems: list[Problem]) -> list[Problem]:
    return list(dict.fromkeys(problems))
