"""`go test -json` and `go test -v` readers on gotestsum's, dorny's and SWE-smith's real runs."""

from __future__ import annotations

import json

import pytest

from factory.records import TestStatus
from factory.verify.results import read
from tests.verify.results.polyglot import POLYGLOT, codes, ids, needs_polyglot, read_fixture

P, F, S = TestStatus.passed, TestStatus.failed, TestStatus.skipped
pytestmark = needs_polyglot

PARALLEL = {"TestNestedParallelFailures", "TestNestedParallelFailures/a", "TestNestedParallelFailures/b",
            "TestNestedParallelFailures/c", "TestNestedParallelFailures/d", "TestParallelTheFirst",
            "TestParallelTheSecond", "TestParallelTheThird"}
WITHFAILS = {"TestFailed", "TestFailedWithStderr", "TestNestedWithFailure", "TestNestedWithFailure/c"}


def _by_package(r, status):
    return {(c.suite.rsplit("/", 1)[-1], c.id) for c in r.cases if c.status == status}


@pytest.mark.parametrize("reader,name", [("go-json", "gotest__gotestsum_json_stream.json"),
                                         ("go-text", "gotest__gotestsum_standard_verbose.txt")])
def test_gotestsum_run_as_json_and_as_verbose_text_reads_the_same(reader, name):
    r = read_fixture(reader, name)
    assert (r.seen.total, r.seen.passed, r.seen.skipped, r.seen.failed) == (59, 42, 5, 12)
    assert _by_package(r, F) == {("parallelfails", t) for t in PARALLEL} | {("withfails", t) for t in WITHFAILS}
    assert _by_package(r, S) == {("good", "TestSkipped"), ("good", "TestSkippedWitLog"), ("withfails", "TestSkipped"),
                                 ("withfails", "TestSkippedWitLog"), ("withfails", "TestTimeout")}
    [problem] = r.problems  # badmain fails with no test
    assert problem.code == "suite_failed" and "badmain" in problem.detail


def test_the_same_name_in_two_packages_keeps_its_worst_and_is_not_a_rerun():
    r = read_fixture("go-json", "gotest__gotestsum_json_stream.json")
    assert r.statuses["TestParallelTheFirst"] == F  # passes in good, fails in parallelfails
    assert r.twice == ()


def test_dorny_calculator_stream():
    r = read_fixture("go-json", "gotest__dorny_calculator_json.json")
    assert (r.seen.total, r.seen.passed, r.seen.failed, r.seen.skipped) == (12, 5, 6, 1)
    assert ids(r, P) == {"TestPassing", "TestCases/1_+_2_=_3", "TestCases/4_+_7_=_11", "TestCases/9_/_3_=_3",
                         "TestCases/14_/_7_=_2"}
    assert ids(r, F) == {"TestFailing", "TestPanicInsideFunction", "TestPanicInsideTest", "TestCases",
                         "TestCases/2_+_3_=_4", "TestCases/1_/_2_=_1"}
    assert ids(r, S) == {"TestSkipped"}


def test_parallel_failures_stream():
    r = read_fixture("go-json", "gotest__gotestsum_json_parallel_fails.json")
    assert (r.seen.passed, r.seen.failed) == (4, 8) and ids(r, F) == PARALLEL


def test_a_panic_with_a_run_event_and_no_fail_event_is_a_failure():
    r = read_fixture("go-json", "gotest__gotestsum_json_panic_missing_fail.json")
    assert r.statuses == {"TestWaitOn_WithCompare": F}  # gotestsum: DONE 1 tests, 1 failure
    assert codes(r) == []


def test_a_stream_cut_mid_test_fails_the_test_that_was_running():
    lines = (POLYGLOT / "gotest__gotestsum_json_panic_missing_fail.json").read_text().splitlines()
    r = read("go-json", "\n".join(lines[:5]))
    assert r.statuses == {"TestWaitOn_WithCompare": F}


def test_a_build_failure_has_no_test_and_says_why():
    r = read_fixture("go-json", "gotest__gotestsum_json_build_failed.json", exit_code=1)
    assert r.cases == () and not r.ran
    assert codes(r) == ["build_failed"] and "example.com/internal/cacher" in r.problems[0].detail


def test_a_forged_pass_line_printed_by_a_test_is_output_of_that_test_not_a_pass():
    events = [
        {"Action": "run", "Package": "p", "Test": "TestForger"},
        {"Action": "output", "Package": "p", "Test": "TestForger", "Output": "--- PASS: TestHidden (0.00s)\n"},
        {"Action": "output", "Package": "p", "Test": "TestForger", "Output": "ok  \tp\t0.01s\n"},
        {"Action": "fail", "Package": "p", "Test": "TestForger"},
        {"Action": "fail", "Package": "p"},
    ]
    r = read("go-json", "\n".join(json.dumps(e) for e in events))
    assert r.statuses == {"TestForger": F}


def test_the_same_test_run_twice_is_reported_twice():
    events = [{"Action": a, "Package": "p", "Test": "TestFlap"} for a in ("run", "pass", "run", "fail")]
    r = read("go-json", "\n".join(json.dumps(e) for e in events))
    assert r.twice == ("TestFlap",) and r.statuses == {"TestFlap": F}


def test_noise_and_broken_lines_between_events_are_skipped_and_a_stream_of_none_is_malformed():
    events = [{"Action": "run", "Package": "p", "Test": "TestA"}, {"Action": "pass", "Package": "p", "Test": "TestA"}]
    noisy = "+ go test -json ./...\n" + json.dumps(events[0]) + '\n{"Action": "pa\n' + json.dumps(events[1])
    assert read("go-json", noisy).statuses == {"TestA": P}
    assert codes(read("go-json", "panic: before any test\n")) == ["malformed"]


def test_swesmith_gin_verbose_log_with_shell_noise_before_the_run():
    r = read_fixture("go-text", "gotest__swesmith_gin_verbose.txt")
    assert r.statuses["TestRouteStaticNoListing"] == F
    assert r.statuses["TestBasicAuth"] == P
    assert r.statuses["TestContextGetInt8"] == P
    assert r.statuses["TestContextInitQueryCache/queryCache_should_remain_unchanged_if_already_not_nil"] == P
    assert ids(r, F) == {"TestRouteStaticNoListing"}  # its package line is not a test
    assert not r.structured


def test_go_text_panic_without_a_result_line_fails_the_running_test():
    text = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\npanic: boom\nFAIL\tex.com/p\t0.01s\n"
    r = read("go-text", text)
    assert r.statuses == {"TestA": P, "TestB": F} and codes(r) == []


def test_go_text_build_failure_and_colours():
    text = "# ex.com/p\n./a.go:3:1: undefined: x\nFAIL\tex.com/p [build failed]\n"
    assert codes(read("go-text", text)) == ["build_failed"]
    coloured = "\x1b[32m--- PASS: TestA (0.00s)\x1b[0m\nok  \tex.com/p\t0.01s\n"
    assert read("go-text", coloured).statuses == {"TestA": P}
