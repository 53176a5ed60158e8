"""`resolved`: only runs the verifier accepted, and that the agent ended by submitting.

A pass during which the test machinery was altered (pytest's report, runner or hook objects,
the reporting plugin, the builtins it uses, the blind checks' stand-ins: seen by the plugin as
the tests ran, `docs/verify.md`) may be forged, whatever the controls say, and a poisoned
trajectory is worse than a missing one: such a run is dropped from the dataset (the verdict,
and the pass rates, stand). The verifier counts such a run as tampered already; this holds
for any verdict that carries the flag. What a patch's text mentions (`_pytest` in a
`TYPE_CHECKING` import, an `atexit` helper: the static flags) is for a reviewer, never a drop."""

from __future__ import annotations

from typing import ClassVar

from factory.filters.base import AttemptFilter, DropReason, Rejection
from factory.records import Attempt, Exit, FlagKind
from factory.section import Section


class ResolvedConfig(Section):
    enabled: bool = True
    """Run this filter (turning it off publishes unverified runs: only for debugging)."""
    require_submitted: bool = True
    """Also require exit `submitted`: a run cut off by a limit is not taught even if its diff passes."""
    drop_suspect: bool = True
    """Drop a resolved run whose verdict says the test machinery was altered while its tests ran."""
    drop_no_copies: bool = False
    """Also drop a resolved run one of whose FAIL_TO_PASS tests ran without copies (flag `no copies`:
    outside Python, a test with no literal a change surely fails). Off by default: it drops every
    correct run of 9 of the 21 non-Python demo tasks (Go 5 of 6), to close a forgery no teacher
    has been seen to write (docs/verify.md)."""


class ResolvedFilter(AttemptFilter):
    name: ClassVar[str] = "resolved"
    reasons: ClassVar[dict[str, str]] = {
        DropReason.no_trajectory: "the attempt failed before the agent ran (sandbox or teacher outage)",
        DropReason.not_verified: "no verdict was recorded",
        DropReason.not_resolved: "the hidden tests did not all pass",
        DropReason.not_submitted: "the tests passed but the agent did not end by submitting",
        DropReason.suspect_pass: "resolved, but the test machinery was altered while the tests ran",
    }

    def __init__(self, config: ResolvedConfig | None = None):
        self.config = config or ResolvedConfig()

    def check(self, attempt: Attempt) -> Rejection | None:
        if attempt.trajectory is None:
            return Rejection(DropReason.no_trajectory, attempt.error_class or "no trajectory recorded")
        if attempt.verdict is None:
            return Rejection(DropReason.not_verified, attempt.error_class or "no verdict recorded")
        if not attempt.verdict.resolved:
            reason = attempt.verdict.reason.value if attempt.verdict.reason else "unresolved"
            return Rejection(DropReason.not_resolved, reason)
        altered = attempt.verdict.flagged(FlagKind.altered_machinery)
        if self.config.drop_suspect and altered:
            return Rejection(DropReason.suspect_pass, str(altered[0]))
        uncopied = attempt.verdict.flagged(FlagKind.no_copies)
        if self.config.drop_no_copies and uncopied:
            return Rejection(DropReason.suspect_pass, str(uncopied[0]))
        exit_ = attempt.trajectory.exit
        if self.config.require_submitted and exit_ != Exit.submitted:
            return Rejection(DropReason.not_submitted, f"exit {exit_.value}")
        return None
