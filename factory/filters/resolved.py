"""`resolved`: only runs the verifier accepted, and that the agent ended by submitting.

A verdict can be resolved while it says its controls were weak (a forger could tell some
copies from their originals, `docs/verify.md`); when the same patch also reaches into the test
machinery or the interpreter, the pass may be forged, and a poisoned trajectory is worse than a
missing one: such a run is dropped from the dataset (the verdict, and the pass rates, stand)."""

from __future__ import annotations

from typing import ClassVar

from factory.filters.base import AttemptFilter, DropReason, Rejection
from factory.records import Attempt, Exit
from factory.section import Section


class ResolvedConfig(Section):
    enabled: bool = True
    """Run this filter (turning it off publishes unverified runs: only for debugging)."""
    require_submitted: bool = True
    """Also require exit `submitted`: a run cut off by a limit is not taught even if its diff passes."""
    drop_suspect: bool = True
    """Drop a resolved run whose verdict names weak controls and whose patch touches the test
    machinery, introspects the interpreter or hooks the process (static flags)."""


SUSPECT = ("static: touches_test_machinery", "static: introspects_interpreter", "static: process_hooks")
"""Static flags (`factory.verify.flags`) of a patch that could forge a pass where controls are weak."""


class ResolvedFilter(AttemptFilter):
    name: ClassVar[str] = "resolved"
    reasons: ClassVar[dict[str, str]] = {
        DropReason.no_trajectory: "the attempt failed before the agent ran (sandbox or teacher outage)",
        DropReason.not_verified: "no verdict was recorded",
        DropReason.not_resolved: "the hidden tests did not all pass",
        DropReason.not_submitted: "the tests passed but the agent did not end by submitting",
        DropReason.suspect_pass: "resolved with weak controls by a patch that reaches into the test machinery",
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
        flags = attempt.verdict.flags
        reach = [f.removeprefix("static: ") for f in flags if f in SUSPECT]
        if self.config.drop_suspect and reach and any(f.startswith("weak controls") for f in flags):
            return Rejection(DropReason.suspect_pass, f"weak controls and {', '.join(reach)}")
        exit_ = attempt.trajectory.exit
        if self.config.require_submitted and exit_ != Exit.submitted:
            return Rejection(DropReason.not_submitted, f"exit {exit_.value}")
        return None
