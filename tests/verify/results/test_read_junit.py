"""The JUnit reader on every JUnit file of the polyglot fixtures, then on broken and hostile XML."""

from __future__ import annotations

import pytest

from factory.records import TestStatus
from factory.verify.results import read
from tests.verify.results.polyglot import POLYGLOT, codes, ids, needs_polyglot, read_fixture

P, F, E, S = TestStatus.passed, TestStatus.failed, TestStatus.error, TestStatus.skipped

pytestmark = needs_polyglot


def test_surefire_report_with_errors_failures_and_non_ascii_text():
    r = read_fixture("junit", "surefire__mikepenz_TEST-action.surefire.report.email.EmailAddressTest.xml")
    cls = "action.surefire.report.email.EmailAddressTest"
    assert (r.seen.total, r.seen.errors, r.seen.failed, r.seen.skipped) == (9, 5, 2, 0)
    assert ids(r, P) == {f"{cls}.shouldAcceptInternationalizedDomainNamesUsingPunycode",
                         f"{cls}.shouldBeGoodEnoughForSalesforce"}
    assert ids(r, F) == {f"{cls}.shouldBeStricterThanRfc2822", f"{cls}.shouldNotMissComponents"}
    assert codes(r) == [] and r.ran


def test_kotlin_names_with_spaces_keep_them():
    r = read_fixture("junit", "surefire__mikepenz_TEST-action.surefire.report.calc.CalcUtilsTest.xml")
    assert ids(r, F) == {"action.surefire.report.calc.CalcUtilsTest.test error handling",
                         "action.surefire.report.calc.CalcUtilsTest.test scale"}
    assert (r.seen.total, r.seen.skipped) == (2, 0)


def test_surefire_flaky_failure_is_a_pass_recorded_as_flaky():
    r = read_fixture("junit", "surefire__mikepenz_flaky_rerun.xml")
    [case] = r.cases
    assert case.status == P and case.flaky
    assert r.flaky == ("io.sodadata.dependson.soda.integrations.msteams.MicrosoftTeamsCrudTest.createWebhook",)


def test_the_same_test_reported_twice_keeps_its_worst_report():
    r = read_fixture("junit", "surefire__dorny_pulsar_TEST-org.apache.pulsar.AddMissingPatchVersionTest.xml")
    name = "org.apache.pulsar.AddMissingPatchVersionTest.testVersionStrings"
    assert [c.status for c in r.cases] == [S, F]
    assert r.twice == (name,) and r.statuses == {name: F}
    assert codes(r) == []  # the header (tests=2 failures=1 skipped=1) counts both reports


def test_junit4_complete_example():
    r = read_fixture("junit", "junit__dorny_junit4_complete.xml")
    names = {c.id.removeprefix("Tests.Registration."): c.status for c in r.cases}
    assert {n for n, s in names.items() if s == P} == {"testCase1", "testCase2", "testCase3", "testCase7", "testCase8"}
    assert {n for n, s in names.items() if s in (F, E)} == {"testCase5", "testCase6"}
    assert {n for n, s in names.items() if s == S} == {"testCase4"}


@pytest.mark.parametrize("name", ["junit__junitparser_normal.xml", "junit__junitparser_nested_jenkins.xml"])
def test_flat_and_nested_suites_give_the_same_cases(name):
    r = read_fixture("junit", name)
    statuses = {c.id.removeprefix("JUnitXmlReporter.constructor."): c.status for c in r.cases}
    assert statuses == {"should default path to an empty string": F, "should default consolidate to true": S,
                        "should default useDotNotation to true": P}
    assert codes(r) == []


def test_jest_junit_names_as_describe_path():
    r = read_fixture("junit", "jest__dorny_jest_junit.xml")
    assert (r.seen.total, r.seen.passed, r.seen.failed, r.seen.skipped) == (6, 1, 4, 1)
    by_path = {c.aliases[1] if c.aliases else c.id: c.status for c in r.cases}
    assert by_path == {"Test 1 › Passing test": P, "Test 1 › Test 1.1 › Failing test": F,
                       "Test 1 › Test 1.1 › Exception in target unit": F, "Test 2 › Exception in test": F,
                       "Timeout test": F, "Skipped test": S}


def test_mocha_junit_root_that_claims_15515_tests_holds_one():
    r = read_fixture("junit", "mocha__mikepenz_junit.xml")
    assert r.seen.total == 1 and r.seen.passed == 1
    assert codes(r) == ["count_mismatch"] and "claimed 15515, saw 1" in r.problems[0].detail
    assert r.ran  # a lying header is recorded, not by itself a reason to refuse


def test_node_junit_names_that_need_escaping():
    r = read_fixture("junit", "nodetest__node_junit_quote.xml")
    assert {c.aliases[-1] for c in r.cases} == {'quote"only', "quote&quot;only", 'amp&and"quote"',
                                                 'lt<and"quote', 'line "break'}
    assert r.seen.passed == 5 and r.claimed.total is None


def test_gotestsum_junit_names_are_go_test_names():
    r = read_fixture("junit", "gotest__gotestsum_junit_report.xml")
    good = "gotest.tools/gotestsum/testjson/internal/good"
    assert any(c.suite == good and "TestNestedSuccess/a/sub" in c.ids for c in r.cases)
    # gotestsum counts badmain's TestMain as an error in its root, but writes it as a failure
    assert (r.seen.total, r.seen.failed, r.seen.skipped) == (60, 13, 5)
    assert codes(r) == ["count_mismatch"]


def test_nextest_junit_names_are_cargo_test_names_and_system_out_is_not_read():
    r = read_fixture("junit", "cargo__mikepenz_nextest_junit.xml")
    assert {c.aliases[-1]: c.status for c in r.cases} == {
        "test_failure": F, "test_simple_navigation": P, "test_annotations": P}


def test_catch2_junit():
    r = read_fixture("junit", "catch2__mikepenz_junit_report.xml")
    assert [(c.aliases[-1], c.status) for c in r.cases] == [("is constant evaluated", F)]


def test_truncated_report_is_no_evidence_not_a_crash():
    text = (POLYGLOT / "jest__dorny_jest_junit.xml").read_text()
    for cut in (len(text) // 3, len(text) - 20, 10, 0):
        r = read("junit", text[:cut])
        assert not r.ran and r.cases == ()
        assert codes(r) == ["malformed"]


def test_concatenated_reports_are_read_one_by_one():
    text = "".join(
        (POLYGLOT / name).read_text()
        for name in ("surefire__mikepenz_flaky_rerun.xml", "surefire__mikepenz_TEST-action.surefire.report.calc.CalcUtilsTest.xml")
    )
    r = read("junit", text)
    assert r.seen.total == 3 and r.claimed.total == 3 and codes(r) == []


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<testsuite tests="1"><testcase classname="a" name="&lol3;"/></testsuite>"""
EXTERNAL = """<?xml version="1.0"?>
<!DOCTYPE t [<!ENTITY secret SYSTEM "file:///etc/hostname">]>
<testsuite tests="1"><testcase classname="a" name="&secret;"/></testsuite>"""
PARAMETER = """<?xml version="1.0"?>
<!DOCTYPE t [<!ENTITY % remote SYSTEM "http://127.0.0.1:9/evil.dtd"> %remote;]>
<testsuite tests="1"><testcase classname="a" name="b"/></testsuite>"""


@pytest.mark.parametrize("xml", [BILLION_LAUGHS, EXTERNAL, PARAMETER], ids=["billion-laughs", "external", "parameter"])
def test_hostile_xml_is_refused_before_any_entity_is_expanded(xml):
    r = read("junit", xml)
    assert r.cases == () and codes(r) == ["hostile"] and not r.ran


def test_a_hostile_document_among_honest_ones_spoils_the_whole_report():
    honest = '<?xml version="1.0"?><testsuite tests="1"><testcase classname="a" name="b"/></testsuite>'
    r = read("junit", honest + EXTERNAL)
    assert r.cases == () and codes(r) == ["hostile"]
