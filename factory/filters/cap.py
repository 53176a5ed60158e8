"""`cap`: at most `per_task` runs per task, chosen for diversity.

Tasks solved over and over hurt the student (SWE-smith capped each task at 3 runs). Picks are
greedy: each next pick is the remaining run that brings a patch not yet picked, then a
teacher not yet picked, then has the fewest actions; remaining ties go to a seeded hash of
the attempt key, so the same input and seed always give the same picks, in any order.
"""

from __future__ import annotations

import hashlib
from typing import ClassVar

from pydantic import Field

from factory.filters.actions import actions, normalize_patch
from factory.filters.base import DropReason, Rejection, TaskFilter, key_id, key_label
from factory.records import Attempt
from factory.section import Section


class CapConfig(Section):
    enabled: bool = True
    """Run this filter."""
    per_task: int = Field(3, ge=1)
    """Most runs kept for one task."""
    seed: int = 0
    """Seed of the tie-break between otherwise equal runs."""

    @property
    def most(self) -> int | None:
        """Runs a task keeps at most, and so needs (`factory.run.allocation`); None: no cap."""
        return self.per_task if self.enabled else None


def _tiebreak(attempt: Attempt, seed: int) -> str:
    key = attempt.key
    text = f"{seed}\x1f{key.run_id}\x1f{key.instance_id}\x1f{key.teacher}\x1f{key.index}"
    return hashlib.sha256(text.encode()).hexdigest()


class CapFilter(TaskFilter):
    name: ClassVar[str] = "cap"
    reasons: ClassVar[dict[str, str]] = {
        DropReason.over_cap: "the task already had its quota of more diverse runs",
    }

    def __init__(self, config: CapConfig | None = None):
        self.config = config or CapConfig()

    def reject(self, group: list[Attempt]) -> dict[tuple[str, str, str, int], Rejection]:
        if len(group) <= self.config.per_task:
            return {}
        info = {
            key_id(a.key): (
                normalize_patch(a.trajectory.patch) if a.trajectory else "",
                len(actions(a.trajectory)) if a.trajectory else 0,
                _tiebreak(a, self.config.seed),
            )
            for a in group
        }
        remaining = list(group)
        picked: list[Attempt] = []
        patches: set[str] = set()
        teachers: set[str] = set()

        def score(a: Attempt) -> tuple[bool, bool, int, str]:
            patch, n_actions, tiebreak = info[key_id(a.key)]
            return (patch in patches, a.key.teacher in teachers, n_actions, tiebreak)

        while remaining and len(picked) < self.config.per_task:
            best = min(remaining, key=score)
            remaining.remove(best)
            picked.append(best)
            patches.add(info[key_id(best.key)][0])
            teachers.add(best.key.teacher)
        kept = ", ".join(key_label(a.key) for a in picked)
        detail = f"task has {len(group)} runs; kept {kept}"
        return {key_id(a.key): Rejection(DropReason.over_cap, detail) for a in remaining}
