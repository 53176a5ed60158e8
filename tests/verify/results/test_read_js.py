"""JavaScript runners: node's spec and TAP reporters, jest and mocha JSON, and verbose text."""

from __future__ import annotations

from factory.records import TestStatus
from factory.verify.results import read
from tests.verify.results.polyglot import codes, ids, needs_polyglot, read_fixture

P, F, S = TestStatus.passed, TestStatus.failed, TestStatus.skipped


@needs_polyglot
def test_node_spec_and_tap_of_the_same_bailed_run_agree():
    spec = read_fixture("js-spec", "nodetest__node_spec_bail_one_fail.txt")
    tap = read_fixture("tap", "nodetest__node_tap_bail_one_fail.txt")
    assert spec.statuses == {"nested › first": P, "nested › second": F}  # the recap is not read twice
    assert tap.statuses == {"nested > first": P, "nested > second": F}
    for r in (spec, tap):
        assert (r.claimed.total, r.claimed.passed, r.claimed.failed) == (5, 1, 1)
        assert codes(r) == ["bailed", "count_mismatch"]  # 3 cancelled were never reported


@needs_polyglot
def test_node_spec_success_and_tap_suites_that_are_not_tests():
    assert read_fixture("js-spec", "nodetest__node_spec_reporter_successful.txt").statuses == {"should pass": P}
    r = read_fixture("tap", "nodetest__node_tap_describe_nested.txt")
    assert r.statuses == {"nested - no tests > nested > nested": P}
    assert r.claimed.total == 1 and codes(r) == []


@needs_polyglot
def test_jest_aggregated_result_with_a_contradicting_header():
    r = read_fixture("jest-json", "jest__jestjunit_aggregated_result_failing.json")
    [case] = r.cases
    assert case.id == "Sample Failing Test › Inner › Inner Inner › Should fail" and case.status == F
    assert "Should fail" in case.ids and "Sample Failing Test Inner Inner Inner Should fail" in case.ids
    assert codes(r) == ["count_mismatch"]  # numFailedTests 0, as the mock has it at source


@needs_polyglot
def test_jest_retried_test_is_a_pass_recorded_as_flaky():
    r = read_fixture("jest-json", "jest__jestjunit_aggregated_result_retried.json")
    assert r.statuses == {"foo › baz › should bar": P} and r.flaky == ("foo › baz › should bar",)


@needs_polyglot
def test_mocha_json_reporters():
    r = read_fixture("mocha-json", "mocha__dorny_json_reporter.json")
    assert ids(r, P) == {"Test 1 Passing test"} and ids(r, S) == {"Skipped test"}
    assert ids(r, F) == {"Test 1 Test 1.1 Exception in target unit", "Test 1 Test 1.1 Failing test",
                         "Test 2 Exception in test", "Timeout test"}
    r = read_fixture("mocha-json", "mocha__enricomi_json_reporter_mocha_selftest.json")
    assert (r.seen.total, r.seen.passed, r.seen.skipped, r.seen.failed) == (5, 2, 1, 2)
    assert ids(r, S) == {"Mocha instance method run() should initialize the stats collector"}
    assert codes(r) == []


JEST_VERBOSE = """\
PASS src/query.test.js (5.1 s)
  builder
    \x1b[32m✓\x1b[39m builds the correct query (105 ms)
    nested
      ✕ escapes quotes (3 ms)
    ○ skipped handles unicode
  ✓ top level

  ● builder › nested › escapes quotes

    expect(received).toBe(expected)
    ✓ not a test, a line of the failure message

Tests:       1 failed, 1 skipped, 2 passed, 4 total
"""


def test_jest_verbose_text_names_describe_paths_and_strips_timings_and_colours():
    """Text is forgeable: a test printing `✓ other` to the console is read as a pass; the JSON
    and JUnit reporters come first."""
    r = read("js-spec", JEST_VERBOSE)
    assert r.statuses == {"builder › builds the correct query": P, "builder › nested › escapes quotes": F,
                          "builder › skipped handles unicode": S, "top level": P}
    assert "builds the correct query" in r.cases[0].ids  # SWE-bench's parse_log_jest key
    assert codes(r) == [] and not r.structured


def test_vitest_verbose_lines_carry_their_whole_path():
    text = (" ✓ src/a.test.ts (2 tests) 3ms\n ✓ src/a.test.ts > math > adds 1ms\n"
            " × src/a.test.ts > math > divides 2ms\n ↓ src/a.test.ts > math > later [skipped]\n"
            " Tests  1 failed | 1 passed | 1 skipped (3)\n")
    r = read("js-spec", text)
    assert r.statuses == {"src/a.test.ts > math > adds": P, "src/a.test.ts > math > divides": F,
                          "src/a.test.ts > math > later": S}
    assert "math > adds" in r.cases[0].ids and codes(r) == []


def test_mocha_spec_details_after_the_summary_are_not_read_again():
    text = ("  calc\n    ✔ adds\n    1) divides\n    - later\n\n  1 passing (4ms)\n  1 pending\n  1 failing\n\n"
            "  1) calc\n       divides:\n     AssertionError\n")
    r = read("js-spec", text)
    assert r.statuses == {"calc › adds": P, "calc › divides": F, "calc › later": S}
    assert "calc divides" in r.cases[1].ids and codes(r) == []


def test_a_test_reported_twice_in_text_keeps_its_worst():
    r = read("js-spec", "PASS a.test.js\n  ✓ flips\n  ✕ flips\n")
    assert r.twice == ("flips",) and r.statuses == {"flips": F}


def test_broken_json_reports_are_malformed_not_a_crash():
    for reader in ("jest-json", "mocha-json"):
        assert codes(read(reader, '{"testResults": [')) == ["malformed"]
        assert codes(read(reader, "")) == ["malformed"]
