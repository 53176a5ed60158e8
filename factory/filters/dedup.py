"""`dedup`: within a task, keep one run of each way of solving it.

Two runs of a task are duplicates when their normalized action sequences are identical, or,
for near duplicates, when the MinHash estimate of the Jaccard similarity of their action
shingles reaches `near_threshold`; with `by: patch`, also when their normalized patches are
identical (whitespace never counts). The default, `by: trajectory`, keeps one fix reached by
different ways: a teacher that always finds the same fix still fills a task's cap (which picks
distinct patches first), so early stop is reached instead of every attempt being spent on one
row. Of duplicates the run with the fewest actions is kept (then the lowest
teacher name and attempt index), so the choice does not depend on input order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import Field

from factory.filters.actions import actions, normalize_patch
from factory.filters.base import DropReason, Rejection, TaskFilter, key_id, key_label
from factory.filters.minhash import shingles, signature, similarity
from factory.records import Attempt
from factory.section import Section


class DedupConfig(Section):
    enabled: bool = True
    """Run this filter."""
    actions: bool = True
    """Drop runs whose normalized action sequence equals a kept run's."""
    by: Literal["trajectory", "patch"] = "trajectory"
    """What makes two runs the same way of solving a task: their actions only (`trajectory`), or
    also their normalized patch (`patch`: one row per distinct fix)."""
    near_threshold: float | None = Field(0.9, gt=0.0, le=1.0)
    """Drop runs whose estimated action Jaccard similarity to a kept run reaches this; null turns it off."""
    shingle_size: int = Field(3, ge=1)
    """Consecutive actions per shingle for the MinHash."""
    num_perm: int = Field(128, ge=16)
    """MinHash signature length: more is more precise and slower."""
    seed: int = 1
    """Seed of the MinHash permutations."""


@dataclass
class _Candidate:
    attempt: Attempt
    actions: list[str]
    patch: str
    signature: tuple[int, ...] | None


def preference(attempt: Attempt, n_actions: int) -> tuple[int, str, int]:
    return (n_actions, attempt.key.teacher, attempt.key.index)


class DedupFilter(TaskFilter):
    name: ClassVar[str] = "dedup"
    reasons: ClassVar[dict[str, str]] = {
        DropReason.duplicate_actions: "the same actions as a run kept for the task",
        DropReason.duplicate_patch: "the same patch (ignoring whitespace) as a run kept for the task",
        DropReason.near_duplicate: "nearly the same actions (MinHash) as a run kept for the task",
    }

    def __init__(self, config: DedupConfig | None = None):
        self.config = config or DedupConfig()

    def _candidate(self, attempt: Attempt) -> _Candidate:
        trajectory = attempt.trajectory
        acts = actions(trajectory) if trajectory else []
        sig = None
        if self.config.near_threshold is not None:
            sig = signature(shingles(acts, self.config.shingle_size), self.config.num_perm, self.config.seed)
        return _Candidate(attempt, acts, normalize_patch(trajectory.patch) if trajectory else "", sig)

    def _duplicate_of(self, candidate: _Candidate, kept: list[_Candidate]) -> Rejection | None:
        for other in kept:
            label = key_label(other.attempt.key)
            if self.config.actions and candidate.actions == other.actions:
                return Rejection(DropReason.duplicate_actions, f"same {len(candidate.actions)} actions as {label}")
            if self.config.by == "patch" and candidate.patch and candidate.patch == other.patch:
                return Rejection(DropReason.duplicate_patch, f"same patch as {label}")
        if candidate.signature is None or self.config.near_threshold is None:
            return None
        for other in kept:
            assert other.signature is not None
            score = similarity(candidate.signature, other.signature)
            if score >= self.config.near_threshold:
                detail = f"action similarity {score:.2f} >= {self.config.near_threshold} with {key_label(other.attempt.key)}"
                return Rejection(DropReason.near_duplicate, detail)
        return None

    def reject(self, group: list[Attempt]) -> dict[tuple[str, str, str, int], Rejection]:
        candidates = sorted(
            (self._candidate(a) for a in group), key=lambda c: preference(c.attempt, len(c.actions))
        )
        kept: list[_Candidate] = []
        rejected = {}
        for candidate in candidates:
            rejection = self._duplicate_of(candidate, kept)
            if rejection is None:
                kept.append(candidate)
            else:
                rejected[key_id(candidate.attempt.key)] = rejection
        return rejected
