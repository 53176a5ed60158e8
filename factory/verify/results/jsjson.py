"""JSON reports of JavaScript runners: `jest --json` (and the AggregatedResult that jest hands
its reporters and `testResultsProcessor`), and `mocha --reporter json`.

jest: `testResults[]` per file, each with `assertionResults[]` (the CLI) or `testResults[]`
(the AggregatedResult); a test's id is `ancestorTitles` and `title` joined by ` › `, with
jest's `fullName` and the bare title as aliases. A test that passed after `jest.retryTimes`
reruns (`invocations` > 1) is flaky. A file that failed to run (`testExecError`, or a failure
message and no test) is `suite_failed`.

mocha: `tests[]` with `fullTitle` as the id, failed when `err` is not empty, skipped when
listed in `pending`; a failure that is no test (a `before all` hook) is `suite_failed`.
"""

from __future__ import annotations

import json
from typing import Any

from factory.records import TestStatus
from factory.verify.results.names import clean
from factory.verify.results.record import Case, Counts, Problem, ProblemCode, Results

_JEST = {"passed": TestStatus.passed, "failed": TestStatus.failed, "pending": TestStatus.skipped,
         "skipped": TestStatus.skipped, "todo": TestStatus.skipped, "disabled": TestStatus.skipped,
         "focused": TestStatus.passed}


def _load(text: str) -> dict[str, Any] | Problem:
    start = text.find("{")  # runners and scripts may print before the document
    try:
        data = json.loads(text[start:]) if start >= 0 else None
    except ValueError as exc:
        return Problem(ProblemCode.malformed, f"not a JSON document: {exc}")
    return data if isinstance(data, dict) else Problem(ProblemCode.malformed, "not a JSON object")


def read_jest_json(text: str) -> Results:
    data = _load(text)
    if isinstance(data, Problem):
        return Results(found=(data,))
    cases: list[Case] = []
    found: list[Problem] = []
    for file in _list(data.get("testResults")):
        path = str(file.get("testFilePath") or file.get("name") or "")
        tests = _list(file.get("assertionResults") or file.get("testResults"))
        if file.get("testExecError") or (not tests and file.get("failureMessage")):
            found.append(Problem(ProblemCode.suite_failed, f"{path} failed to run"))
        for test in tests:
            title = clean(str(test.get("title", "")))
            ancestors = test.get("ancestorTitles")
            path_titles = [clean(str(t)) for t in ancestors if isinstance(t, str)] if isinstance(ancestors, list) else []
            path_titles.append(title)
            status = _JEST.get(str(test.get("status")), TestStatus.error)
            invocations = test.get("invocations")
            cases.append(Case(
                " › ".join(path_titles), status, suite=path,
                aliases=tuple(dict.fromkeys((clean(str(test.get("fullName") or " ".join(path_titles))),
                                             " > ".join(path_titles), title))),
                flaky=status == TestStatus.passed and isinstance(invocations, int) and invocations > 1,
            ))
    claimed = Counts(
        total=_int(data.get("numTotalTests")), passed=_int(data.get("numPassedTests")),
        failed=_int(data.get("numFailedTests")),
        skipped=_sum(data.get("numPendingTests"), data.get("numTodoTests")),
    )
    return Results(cases=tuple(cases), claimed=claimed, found=tuple(found))


def read_mocha_json(text: str) -> Results:
    data = _load(text)
    if isinstance(data, Problem):
        return Results(found=(data,))

    def key(test: dict) -> tuple[str, str]:
        return str(test.get("fullTitle", "")), str(test.get("file", ""))

    pending = {key(t) for t in _list(data.get("pending"))}
    tests = _list(data.get("tests"))
    cases = []
    for test in tests:
        status = (TestStatus.skipped if key(test) in pending else
                  TestStatus.failed if test.get("err") else TestStatus.passed)
        retried = isinstance(test.get("currentRetry"), int) and test["currentRetry"] > 0
        cases.append(Case(clean(key(test)[0]), status, suite=key(test)[1],
                          aliases=(clean(str(test.get("title", ""))),),
                          flaky=status == TestStatus.passed and retried))
    listed = {key(t) for t in tests}
    found = tuple(Problem(ProblemCode.suite_failed, f"{key(t)[0]} failed outside any test")
                  for t in _list(data.get("failures")) if key(t) not in listed)
    stats = data.get("stats") if isinstance(data.get("stats"), dict) else {}
    claimed = Counts(total=_int(stats.get("tests")), passed=_int(stats.get("passes")),
                     failed=_int(stats.get("failures")), skipped=_int(stats.get("pending")))
    return Results(cases=tuple(cases), claimed=claimed, found=found)


def _list(value: Any) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _sum(*values: Any) -> int | None:
    numbers = [v for v in map(_int, values) if v is not None]
    return sum(numbers) if numbers else None
