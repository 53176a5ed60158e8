"""`loops`: drop runs that repeat themselves, so the student is never taught to loop.

A loop is a stretch of at least `min_repeats` consecutive actions in which every action equals
the one `period` places before it, for some period from 1 (the same action again and again)
to `max_period` (a short cycle such as view, edit, view, edit, ...). SWE-smith found that a
student run with 10+ repeated actions failed 89% of the time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pydantic import Field

from factory.filters.actions import actions
from factory.filters.base import AttemptFilter, DropReason, Rejection
from factory.records import Attempt
from factory.section import Section


class LoopsConfig(Section):
    enabled: bool = True
    """Run this filter."""
    min_repeats: int = Field(10, ge=2)
    """Drop a run with this many consecutive actions in a loop (9 repeats are kept, 10 dropped)."""
    max_period: int = Field(3, ge=1)
    """Longest cycle looked for: 1 finds only the same action repeated, 3 also finds cycles of 2 and 3."""


@dataclass(frozen=True)
class Loop:
    period: int
    start: int
    """Index of the first action of the loop, counting every tool call of the run from 0."""
    length: int
    """How many consecutive actions the loop covers."""


def find_loop(sequence: list[str], min_repeats: int, max_period: int) -> Loop | None:
    """The first loop of at least `min_repeats` actions, trying the shortest period first."""
    for period in range(1, max_period + 1):
        run_start, matches = 0, 0
        for i in range(period, len(sequence)):
            if sequence[i] == sequence[i - period]:
                if matches == 0:
                    run_start = i - period
                matches += 1
                if matches + period >= min_repeats:
                    return Loop(period, run_start, _extent(sequence, run_start, period))
            else:
                matches = 0
    return None


def _extent(sequence: list[str], start: int, period: int) -> int:
    end = start + period
    while end < len(sequence) and sequence[end] == sequence[end - period]:
        end += 1
    return end - start


class LoopsFilter(AttemptFilter):
    name: ClassVar[str] = "loops"
    reasons: ClassVar[dict[str, str]] = {
        DropReason.repeated_action: "the same action repeated many times in a row",
        DropReason.action_cycle: "a short cycle of actions repeated many times",
    }

    def __init__(self, config: LoopsConfig | None = None):
        self.config = config or LoopsConfig()

    def check(self, attempt: Attempt) -> Rejection | None:
        if attempt.trajectory is None:
            return None
        sequence = actions(attempt.trajectory)
        loop = find_loop(sequence, self.config.min_repeats, self.config.max_period)
        if loop is None:
            return None
        action = sequence[loop.start]
        shown = action if len(action) <= 120 else action[:117] + "..."
        if loop.period == 1:
            return Rejection(
                DropReason.repeated_action,
                f"{loop.length} repeats from action {loop.start}: {shown}",
            )
        return Rejection(
            DropReason.action_cycle,
            f"cycle of {loop.period} over {loop.length} actions from action {loop.start}: {shown}",
        )
