"""What every filter shares: reason codes, drop and flag records, and the loops filters plug into.

A filter decides; it never writes anywhere. Every attempt it rejects comes back as a `Drop`
(attempt key, filter, reason code, detail) and every row it changes without rejecting comes
back as a `Flag`, so the caller can count them and record them in the warehouse.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from factory.records import Attempt, AttemptKey


class DropReason(StrEnum):
    """Why a filter dropped an attempt; the codes the warehouse and the card count."""

    no_trajectory = "no_trajectory"
    not_verified = "not_verified"
    not_resolved = "not_resolved"
    not_submitted = "not_submitted"
    suspect_pass = "suspect_pass"
    repeated_action = "repeated_action"
    action_cycle = "action_cycle"
    duplicate_actions = "duplicate_actions"
    duplicate_patch = "duplicate_patch"
    near_duplicate = "near_duplicate"
    over_cap = "over_cap"
    too_long = "too_long"
    render_failed = "render_failed"
    secret_found = "secret_found"


class FlagCode(StrEnum):
    """Something a filter changed in a row it kept."""

    secret_redacted = "secret_redacted"
    sampled_tokens_differ = "sampled_tokens_differ"
    """The renderer's ids of a turn are not the ids the teacher's server sampled for it
    (`factory.render.sampled`): the row trains on other tokens than the rollout scored."""


@dataclass(frozen=True)
class Drop:
    key: AttemptKey
    filter: str
    reason: str
    """A code from the filter's `reasons` (the built-in ones are `DropReason` members)."""
    detail: str = ""

    def to_row(self) -> dict[str, Any]:
        """A flat row for the warehouse's filter-decision table."""
        return {**self.key.model_dump(), "filter": self.filter, "reason": str(self.reason), "detail": self.detail}


@dataclass(frozen=True)
class Flag:
    key: AttemptKey
    filter: str
    code: FlagCode
    detail: str = ""

    def to_row(self) -> dict[str, Any]:
        return {**self.key.model_dump(), "filter": self.filter, "code": str(self.code), "detail": self.detail}


@dataclass
class FilterResult:
    kept: list[Attempt]
    drops: list[Drop] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)


@dataclass(frozen=True)
class Rejection:
    """What a filter's decision function returns for an attempt it rejects."""

    reason: str
    """A code from the filter's `reasons` (the built-in ones are `DropReason` members)."""
    detail: str = ""


def key_id(key: AttemptKey) -> tuple[str, str, str, int]:
    """A hashable identity for an attempt (AttemptKey itself is a mutable model)."""
    return (key.run_id, key.instance_id, key.teacher, key.index)


def key_label(key: AttemptKey) -> str:
    return f"{key.teacher}#{key.index}"


class BaseFilter(ABC):
    """A pure stage over attempts. Subclasses implement `run`; `apply` is the `factory.protocols.Filter` shape."""

    name: ClassVar[str]
    reasons: ClassVar[dict[str, str]] = {}
    """The drop reason codes this filter uses, each with what it means (the card's glossary)."""

    @abstractmethod
    def run(self, attempts: list[Attempt]) -> FilterResult: ...

    def apply(self, attempts: list[Attempt]) -> tuple[list[Attempt], list[tuple[Attempt, str]]]:
        result = self.run(attempts)
        by_key = {key_id(a.key): a for a in attempts}
        return result.kept, [(by_key[key_id(d.key)], str(d.reason)) for d in result.drops]


class AttemptFilter(BaseFilter):
    """A filter that judges each attempt on its own (datatrove's `filter(doc)`)."""

    @abstractmethod
    def check(self, attempt: Attempt) -> Rejection | None: ...

    def run(self, attempts: list[Attempt]) -> FilterResult:
        result = FilterResult(kept=[])
        for attempt in attempts:
            rejection = self.check(attempt)
            if rejection is None:
                result.kept.append(attempt)
            else:
                result.drops.append(Drop(attempt.key, self.name, rejection.reason, rejection.detail))
        return result


class TaskFilter(BaseFilter):
    """A filter that judges the attempts of one task together (dedup, cap)."""

    @abstractmethod
    def reject(self, group: list[Attempt]) -> dict[tuple[str, str, str, int], Rejection]:
        """Rejections keyed by `key_id`, for one task's attempts."""

    def run(self, attempts: list[Attempt]) -> FilterResult:
        groups: dict[str, list[Attempt]] = defaultdict(list)
        for attempt in attempts:
            groups[attempt.key.instance_id].append(attempt)
        rejected: dict[tuple[str, str, str, int], Rejection] = {}
        for group in groups.values():
            rejected.update(self.reject(group))
        result = FilterResult(kept=[])
        for attempt in attempts:  # input order is kept, so reruns are stable
            rejection = rejected.get(key_id(attempt.key))
            if rejection is None:
                result.kept.append(attempt)
            else:
                result.drops.append(Drop(attempt.key, self.name, rejection.reason, rejection.detail))
        return result
