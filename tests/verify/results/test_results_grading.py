"""Grading FAIL_TO_PASS / PASS_TO_PASS against read results: SWE-bench's rule, and stricter."""

from __future__ import annotations

import json

import pytest

from factory.errors import UsageError
from factory.records import TestStatus
from factory.verify.results import READERS, grade, read, reader
from tests.docs_examples import run_examples
from tests.verify.results.polyglot import needs_polyglot, read_fixture

P, F, S, M = TestStatus.passed, TestStatus.failed, TestStatus.skipped, TestStatus.missing


def _go(*events: tuple[str, str]) -> str:
    return "\n".join(json.dumps({"Action": a, "Package": "p", "Test": t}) for t, a in events) + \
        "\n" + json.dumps({"Action": "pass" if all(a != "fail" for _, a in events) else "fail", "Package": "p"})


def test_every_wanted_test_passed():
    g = grade(["TestFix"], ["TestOld"], read("go-json", _go(("TestFix", "pass"), ("TestOld", "pass")), exit_code=0))
    assert g.passed and g.failing == () and g.tests == {"TestFix": P, "TestOld": P}


def test_a_test_the_report_never_names_is_missing():
    g = grade(["TestFix", "TestGone"], [], read("go-json", _go(("TestFix", "pass")), exit_code=0))
    assert not g.passed and g.tests["TestGone"] == M and g.failing == ("TestGone",)


def test_a_skipped_fail_to_pass_test_fails_but_a_skipped_pass_to_pass_test_does_not():
    results = read("go-json", _go(("TestFix", "skip"), ("TestOld", "skip")), exit_code=0)
    assert grade(["TestFix"], [], results).failing == ("TestFix",)
    assert grade([], ["TestOld"], results).passed


def test_an_exit_status_that_contradicts_the_report_is_not_a_pass():
    stream = _go(("TestFix", "pass"))
    assert grade(["TestFix"], [], read("go-json", stream, exit_code=0)).passed
    g = grade(["TestFix"], [], read("go-json", stream, exit_code=2))  # e.g. os.Exit(2) after the tests
    assert not g.passed and [p.code for p in g.problems] == ["exit_contradicts"]
    failing = _go(("TestFix", "pass"), ("TestOther", "fail"))
    g = grade(["TestFix"], [], read("go-json", failing, exit_code=0))  # exit 0 forced over a failure
    assert not g.passed and [p.code for p in g.problems] == ["exit_contradicts"]
    assert grade(["TestFix"], [], read("go-json", failing, exit_code=1)).passed
    assert grade(["TestFix"], [], read("go-json", failing)).passed  # the caller does not know it


def test_a_suite_with_no_evidence_of_having_run_is_not_a_pass_even_with_nothing_wanted():
    for results in (read("go-json", ""), read("junit", "<testsuites/>"), read("cargo", "exiting early\n", exit_code=0)):
        g = grade([], [], results)
        assert not g.passed and "not_run" in [p.code for p in g.problems]


def test_an_unreadable_report_is_not_a_pass():
    g = grade([], ["a.b"], read("junit", '<testsuite><testcase classname="a" name="b"/>'))
    assert not g.passed and g.tests == {"a.b": M}


@needs_polyglot
def test_names_as_task_sets_write_them_match():
    surefire = read_fixture("junit", "surefire__mikepenz_TEST-action.surefire.report.email.EmailAddressTest.xml")
    cls = "action.surefire.report.email.EmailAddressTest"
    # Gradle/SWE-smith `classname.name`, SWE-bench `Class#method`
    g = grade([f"{cls}.shouldBeGoodEnoughForSalesforce"], [f"{cls}#shouldAcceptInternationalizedDomainNamesUsingPunycode"],
              surefire)
    assert g.passed
    jest = read_fixture("junit", "jest__dorny_jest_junit.xml")
    assert grade(["Test 1 › Passing test"], [], jest).passed
    assert grade([" Passing test  (3 ms)"], [], jest).passed  # whitespace and timing normalised


@needs_polyglot
def test_a_flaky_rerun_passes_and_is_named_as_flaky():
    r = read_fixture("junit", "surefire__mikepenz_flaky_rerun.xml", exit_code=0)
    g = grade(["io.sodadata.dependson.soda.integrations.msteams.MicrosoftTeamsCrudTest#createWebhook"], [], r)
    assert g.passed and g.flaky == ("io.sodadata.dependson.soda.integrations.msteams.MicrosoftTeamsCrudTest#createWebhook",)


@needs_polyglot
def test_a_test_reported_twice_is_graded_by_its_worst_report():
    r = read_fixture("junit", "surefire__dorny_pulsar_TEST-org.apache.pulsar.AddMissingPatchVersionTest.xml")
    g = grade([], ["org.apache.pulsar.AddMissingPatchVersionTest.testVersionStrings"], r)
    assert g.tests == {"org.apache.pulsar.AddMissingPatchVersionTest.testVersionStrings": F} and not g.passed


@needs_polyglot
def test_a_panicking_fail_to_pass_test_fails_and_a_build_failure_leaves_its_tests_missing():
    panic = read_fixture("go-json", "gotest__gotestsum_json_panic_missing_fail.json", exit_code=1)
    assert grade(["TestWaitOn_WithCompare"], [], panic).tests == {"TestWaitOn_WithCompare": F}
    build = read_fixture("go-json", "gotest__gotestsum_json_build_failed.json", exit_code=1)
    g = grade(["TestCacher"], [], build)
    assert not g.passed and g.tests == {"TestCacher": M} and [p.code for p in g.problems] == ["build_failed"]


def test_an_unknown_reader_lists_the_valid_ones():
    with pytest.raises(UsageError, match="^unknown result reader 'pytest-xml'; valid: cargo, go-json, go-text, "
                                         "jest-json, js-spec, junit, mocha-json, tap$"):
        reader("pytest-xml")
    assert all(READERS.get(name).name == name for name in READERS)


def test_text_readers_are_marked_forgeable():
    assert {name for name, spec in READERS.items() if not spec.structured} == {"cargo", "go-text", "js-spec", "tap"}
    assert read("go-text", "").structured is False and read("junit", "").structured is True


def test_docs_example_runs_and_prints_what_the_page_says():
    assert run_examples("results.md") == 1
