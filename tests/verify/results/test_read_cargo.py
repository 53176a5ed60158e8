"""`cargo test` text on the Rust book's real outputs, and what text readers cannot be sure of."""

from __future__ import annotations

from factory.records import TestStatus
from factory.verify.results import read
from tests.verify.results.polyglot import codes, needs_polyglot, read_fixture

P, F, S = TestStatus.passed, TestStatus.failed, TestStatus.skipped


@needs_polyglot
def test_one_failure_with_the_new_style_panic_line():
    r = read_fixture("cargo", "cargo__rustbook_listing-11-03_one_fail.txt", exit_code=101)
    assert r.statuses == {"tests::another": F, "tests::exploration": P}
    assert (r.claimed.passed, r.claimed.failed) == (1, 1) and codes(r) == []


@needs_polyglot
def test_ignored_is_skipped_and_an_empty_doc_test_binary_adds_nothing():
    r = read_fixture("cargo", "cargo__rustbook_no-listing-11_ignored.txt", exit_code=0)
    assert r.statuses == {"expensive_test": S, "it_works": P} and codes(r) == []


@needs_polyglot
def test_unit_integration_and_doc_test_binaries():
    r = read_fixture("cargo", "cargo__rustbook_listing-11-13_unit_integration_doc.txt", exit_code=0)
    assert {(c.suite, c.id) for c in r.cases} == {("unittests src/lib.rs", "tests::internal"),
                                                  ("tests/integration_test.rs", "it_adds_two")}
    assert r.seen.passed == 2 and codes(r) == []


BINARY = """     Running unittests src/lib.rs (target/debug/deps/adder-92948b65e88960b4)

running 3 tests
test tests::a ... ok
test tests::b - should panic ... ok
test tests::c ... FAILED

failures:

---- tests::c stdout ----
test tests::hidden ... ok

failures:
    tests::c

test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests adder

running 1 test
test src/lib.rs - add (line 5) ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
"""


def test_captured_stdout_replayed_under_failures_is_not_read_and_doc_tests_keep_their_names():
    """Text is forgeable (a `--nocapture` test printing `test other ... ok` is read as a pass);
    what libtest replays of a failed test's stdout is at least never read."""
    r = read("cargo", BINARY)
    assert r.statuses == {"tests::a": P, "tests::b": P, "tests::c": F, "src/lib.rs - add (line 5)": P}
    assert "tests::b - should panic" in r.cases[1].ids
    assert codes(r) == [] and not r.structured


def test_a_header_that_lies_about_its_count():
    lying = BINARY.replace("2 passed; 1 failed", "3 passed; 0 failed")
    assert codes(read("cargo", lying)) == ["count_mismatch"]


def test_a_binary_that_dies_before_its_summary_and_a_compile_error():
    crashed = "running 2 tests\ntest a ... ok\nerror: test failed, to rerun pass `--lib`\n"
    assert codes(read("cargo", crashed)) == ["suite_failed"]
    broken = ("   Compiling adder v0.1.0\nerror[E0425]: cannot find value `x` in this scope\n"
              "error: could not compile `adder` (lib test) due to 1 previous error\n")
    r = read("cargo", broken, exit_code=101)
    assert r.cases == () and set(codes(r)) == {"build_failed"} and not r.ran


def test_ansi_colours_are_stripped():
    r = read("cargo", "running 1 test\ntest a::b ... \x1b[32mok\x1b[0m\n")
    assert r.statuses == {"a::b": P}
