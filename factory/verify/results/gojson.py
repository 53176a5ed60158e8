"""`go test -json` events (NDJSON, what test2json writes; gotestsum reads the same stream).

A test's status is its terminal event (`pass`, `fail`, `skip`). What a test prints arrives as
`output` events and is never read for status: since Go 1.20 test2json frames the testing
package's own lines (`-test.v=test2json`), so a test printing `--- PASS: TestOther` makes an
output line of its own test, not a pass of another. A test with a `run` event and no terminal
event died mid-run (a panic, a timeout kill, `os.Exit`) and is failed. Package events carry no
`Test`: a package that fails with no failing test (a panic in `TestMain`, a crash) or fails
to build is recorded as a problem; its tests are simply absent.
"""

from __future__ import annotations

import json

from factory.records import TestStatus
from factory.verify.results.names import clean
from factory.verify.results.record import Case, Problem, ProblemCode, Results

_TERMINAL = {"pass": TestStatus.passed, "fail": TestStatus.failed, "skip": TestStatus.skipped}


def read_go_json(text: str) -> Results:
    cases: list[Case] = []
    running: dict[tuple[str, str], None] = {}  # ordered set of (package, test) without an end yet
    failed_packages: set[str] = set()
    found: dict[str, Problem] = {}
    events = 0
    for line in text.splitlines():
        event = _event(line)
        if event is None:
            continue  # go's own stderr or shell noise merged into the stream
        events += 1
        action, package, test = event.get("Action"), str(event.get("Package", "")), event.get("Test")
        if action == "build-fail":
            path = str(event.get("ImportPath", ""))
            found[path] = Problem(ProblemCode.build_failed, path)
        elif test and action == "run":
            running[(package, test)] = None
        elif test and action in _TERMINAL:
            running.pop((package, test), None)
            cases.append(Case(clean(test), _TERMINAL[action], suite=package))
            if action == "fail":
                failed_packages.add(package)
        elif not test and action == "fail":
            unended = [t for (p, t) in running if p == package]
            for name in unended:
                running.pop((package, name))
                cases.append(Case(clean(name), TestStatus.failed, suite=package))
            if build := event.get("FailedBuild"):
                found.setdefault(str(build), Problem(ProblemCode.build_failed, str(build)))
            elif package not in failed_packages and not unended:
                found[package] = Problem(ProblemCode.suite_failed, f"package {package} failed with no failing test")
    # The stream ended (killed, cut) with tests still running: none of them finished.
    cases.extend(Case(clean(t), TestStatus.failed, suite=p) for p, t in running)
    if not events and text.strip():
        return Results(found=(Problem(ProblemCode.malformed, "no go test -json event in the output"),))
    return Results(cases=tuple(cases), found=tuple(found.values()))


def _event(line: str) -> dict | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) and isinstance(event.get("Action"), str) else None
