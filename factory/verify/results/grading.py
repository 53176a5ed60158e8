"""Grading a run from its results: SWE-bench's rule, and stricter.

SWE-bench resolves a task when every FAIL_TO_PASS and PASS_TO_PASS test passed in the log its
parser read. Here, besides:

- a test the report never names is `missing`, which fails (the parsers' dict lookup does too);
- a skipped FAIL_TO_PASS test fails (a skipped PASS_TO_PASS test still passes, as SWE-bench has it);
- a test reported more than once keeps its worst report;
- a report with no evidence of a run (nothing ran, unreadable, hostile) is not a pass;
- an exit status that contradicts the report is not a pass;
- a test that passed only on a rerun passes, and the grade names it as flaky.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from factory.records import TestStatus
from factory.verify.results.names import clean
from factory.verify.results.record import DENIES_PASS, Problem, Results, worst


@dataclass(frozen=True)
class Grade:
    passed: bool
    tests: dict[str, TestStatus]
    """Each FAIL_TO_PASS and PASS_TO_PASS id, as the task row writes it -> its graded status."""
    failing: tuple[str, ...]
    """The ids that kept the grade from passing."""
    problems: tuple[Problem, ...]
    """Everything wrong with the report, whether or not it denied the pass."""
    flaky: tuple[str, ...] = ()
    """Wanted ids that passed only on a rerun."""


def status_of(results: Results, test_id: str, suite: str | None = None) -> tuple[TestStatus, bool]:
    """The worst status among the cases that answer to `test_id` (in `suite`, when named), and
    whether it was flaky."""
    wanted = clean(test_id)
    matches = [c for c in results.cases if wanted in c.ids and suite in (None, c.suite)]
    if not matches:
        return TestStatus.missing, False
    status = worst([c.status for c in matches])
    return status, status == TestStatus.passed and any(c.flaky for c in matches)


def grade(fail_to_pass: Iterable[str], pass_to_pass: Iterable[str], results: Results) -> Grade:
    must_pass = {TestStatus.passed}
    may_pass = {TestStatus.passed, TestStatus.skipped}
    tests: dict[str, TestStatus] = {}
    failing: list[str] = []
    flaky: list[str] = []
    for ids, ok in ((fail_to_pass, must_pass), (pass_to_pass, may_pass)):
        for test_id in ids:
            status, was_flaky = status_of(results, test_id)
            tests[test_id] = status
            if status not in ok:
                failing.append(test_id)
            if was_flaky:
                flaky.append(test_id)
    problems = results.problems
    denied = not results.ran or any(p.code in DENIES_PASS for p in problems)
    return Grade(passed=not failing and not denied, tests=tests, failing=tuple(failing),
                 problems=problems, flaky=tuple(flaky))
