import pytest

from factory.filters import DropReason, ResolvedConfig, ResolvedFilter
from factory.records import Exit, FlagKind, Reason, Verdict
from tests.filters.attempt_builder import attempt


def test_a_verified_submitted_run_is_kept():
    a = attempt()
    result = ResolvedFilter().run([a])
    assert result.kept == [a] and result.drops == []


@pytest.mark.parametrize(
    ("change", "reason", "detail"),
    [
        ({"verdict": Verdict(resolved=False, reason=Reason.tests_failed)}, DropReason.not_resolved, "tests_failed"),
        ({"verdict": None, "error_class": "VerifyError"}, DropReason.not_verified, "VerifyError"),
        ({"trajectory": None, "verdict": None, "error_class": "SandboxStartError"}, DropReason.no_trajectory, "SandboxStartError"),
    ],
)
def test_unverified_runs_are_dropped_with_their_reason(change, reason, detail):
    a = attempt().model_copy(update=change)
    result = ResolvedFilter().run([a])
    assert result.kept == []
    (drop,) = result.drops
    assert (drop.filter, drop.reason, drop.detail) == ("resolved", reason, detail)
    assert drop.key == a.key


def test_a_resolved_run_that_did_not_submit_is_dropped():
    a = attempt(exit=Exit.max_turns)
    (drop,) = ResolvedFilter().run([a]).drops
    assert drop.reason == DropReason.not_submitted and drop.detail == "exit max_turns"
    assert ResolvedFilter(ResolvedConfig(require_submitted=False)).run([a]).kept == [a]


WEAK = "weak controls: 1 of 1 FAIL_TO_PASS tests have only copies that a forger may tell apart"
ALTERED = "altered test machinery: _pytest.reports.TestReport.from_item_and_call"


@pytest.mark.parametrize(("flags", "dropped"), [
    ([ALTERED], True),  # whatever the controls say
    ([WEAK, ALTERED, "static: touches_test_machinery"], True),
    ([WEAK], False),  # weak controls alone: the patch did nothing a forger needs
    # what a patch's text mentions is for review: an atexit helper, a TYPE_CHECKING import of _pytest
    ([WEAK, "static: touches_test_machinery", "static: process_hooks"], False),
    (["static: introspects_interpreter", WEAK], False),
])
def test_a_pass_that_altered_the_test_machinery_is_not_taught(flags, dropped):
    a = attempt().model_copy(update={"verdict": Verdict(resolved=True, flags=flags)})
    result = ResolvedFilter().run([a])
    assert (result.kept == []) is dropped
    if dropped:
        assert result.drops[0].reason == DropReason.suspect_pass and result.drops[0].detail.startswith("altered")
    assert ResolvedFilter(ResolvedConfig(drop_suspect=False)).run([a]).kept == [a]


def test_a_pass_with_uncopied_tests_is_taught_unless_the_pipeline_asks_to_drop_it():
    a = attempt().model_copy(update={"verdict": Verdict(resolved=True, flags=["no copies: TestConstraintCheck"])})
    assert a.verdict.flagged(FlagKind.no_copies)[0].detail == "TestConstraintCheck"
    assert ResolvedFilter().run([a]).kept == [a]
    dropped = ResolvedFilter(ResolvedConfig(drop_no_copies=True)).run([a])
    assert dropped.kept == [] and dropped.drops[0].detail == "no copies: TestConstraintCheck"
