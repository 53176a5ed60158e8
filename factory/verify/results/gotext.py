"""`go test -v` console output, as SWE-bench's `parse_log_gotest` and SWE-smith's Go profile read it.

    === RUN   TestNestedWithFailure/c
    --- FAIL: TestNestedWithFailure (0.00s)
        --- FAIL: TestNestedWithFailure/c (0.00s)
    FAIL    example.com/pkg 0.020s

Text is forgeable: a test that prints `--- PASS: TestOther (0.00s)` writes a line this reader
cannot tell from the testing package's; `go test -json` (read by `go-json`) is the structured
channel and comes first. Shell noise before the run is skipped. A test with `=== RUN` and no
result line before its package's `FAIL` died mid-run (a panic) and is failed; a package that
fails with no failing test is `suite_failed`, one whose build or setup failed `build_failed`.
"""

from __future__ import annotations

import re

from factory.records import TestStatus
from factory.verify.results.names import clean, strip_ansi
from factory.verify.results.record import Case, Problem, ProblemCode, Results

_RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)(?:\s+\(.*\))?\s*$")
_RUN = re.compile(r"^=== RUN\s+(\S+)\s*$")
_PACKAGE = re.compile(r"^(ok|FAIL|\?)\s+(\S+)(?:\s+(.*))?$")
_STATUS = {"PASS": TestStatus.passed, "FAIL": TestStatus.failed, "SKIP": TestStatus.skipped}


def read_go_text(text: str) -> Results:
    cases: list[Case] = []
    pending: list[Case] = []  # results whose package line has not come yet
    running: dict[str, None] = {}
    found: list[Problem] = []
    for raw in text.splitlines():
        line = strip_ansi(raw).rstrip()
        if m := _RUN.match(line):
            running[m.group(1)] = None
        elif m := _RESULT.match(line):
            running.pop(m.group(2), None)
            pending.append(Case(clean(m.group(2)), _STATUS[m.group(1)]))
        elif m := _PACKAGE.match(line):
            verdict, package, rest = m.group(1), m.group(2), m.group(3) or ""
            if verdict == "?":
                continue  # [no test files]
            died = [Case(clean(name), TestStatus.failed) for name in running]
            batch = [Case(c.id, c.status, suite=package) for c in (*pending, *died)]
            if verdict == "FAIL" and ("build failed" in rest or "setup failed" in rest):
                found.append(Problem(ProblemCode.build_failed, f"{package} {rest}".strip()))
            elif verdict == "FAIL" and not any(c.status == TestStatus.failed for c in batch):
                found.append(Problem(ProblemCode.suite_failed, f"package {package} failed with no failing test"))
            cases.extend(batch)
            pending, running = [], {}
    cases.extend(pending)
    cases.extend(Case(clean(name), TestStatus.failed) for name in running)  # cut off mid-test
    return Results(cases=tuple(cases), found=tuple(found), structured=False)
