"""The numbers a dataset card reports: pass rates per teacher and per language, token statistics."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factory.records import Attempt, Task


@dataclass
class TeacherStats:
    teacher: str
    models: set[str] = field(default_factory=set)
    attempts: int = 0
    infra_errors: int = 0
    """Attempts ended by infrastructure (sandbox, engine, teacher API, verification) rather than the model."""
    resolved: int = 0
    kept: int = 0
    scripted: bool = False

    @property
    def graded(self) -> int:
        """Attempts that count for or against the teacher: infrastructure errors do not."""
        return self.attempts - self.infra_errors

    @property
    def pass_rate(self) -> float:
        return self.resolved / self.graded if self.graded else 0.0


def teacher_stats(attempts: Iterable[Attempt], kept: Iterable[Attempt]) -> list[TeacherStats]:
    stats: dict[str, TeacherStats] = {}
    for attempt in attempts:
        s = stats.setdefault(attempt.key.teacher, TeacherStats(attempt.key.teacher))
        s.attempts += 1
        s.infra_errors += attempt.error_class is not None
        s.resolved += bool(attempt.verdict and attempt.verdict.resolved)
        if attempt.trajectory is not None:
            s.models.add(attempt.trajectory.model)
            s.scripted = s.scripted or attempt.trajectory.scripted
    for attempt in kept:
        stats.setdefault(attempt.key.teacher, TeacherStats(attempt.key.teacher)).kept += 1
    return sorted(stats.values(), key=lambda s: s.teacher)


@dataclass
class LanguageStats:
    language: str
    """As the task set names it (`python`, `go`, ...); `unknown` for an attempt whose task is not at hand."""
    tasks: set[str] = field(default_factory=set)
    attempts: int = 0
    infra_errors: int = 0
    resolved: int = 0
    kept: int = 0

    @property
    def pass_rate(self) -> float:
        """Resolved over graded attempts, as the teachers' pass rate."""
        graded = self.attempts - self.infra_errors
        return self.resolved / graded if graded else 0.0


def language_stats(attempts: Iterable[Attempt], kept: Iterable[Attempt],
                   tasks: Mapping[str, Task] | None) -> list[LanguageStats]:
    def language(attempt: Attempt) -> str:
        task = (tasks or {}).get(attempt.key.instance_id)
        return task.language if task is not None else "unknown"

    stats: dict[str, LanguageStats] = {}
    for attempt in attempts:
        s = stats.setdefault(language(attempt), LanguageStats(language(attempt)))
        s.tasks.add(attempt.key.instance_id)
        s.attempts += 1
        s.infra_errors += attempt.error_class is not None
        s.resolved += bool(attempt.verdict and attempt.verdict.resolved)
    for attempt in kept:
        stats.setdefault(language(attempt), LanguageStats(language(attempt))).kept += 1
    return sorted(stats.values(), key=lambda s: s.language)


@dataclass
class TaskStats:
    attempted: int
    solved: int
    """Tasks with at least one resolved attempt."""
    in_dataset: int


def task_stats(attempts: Sequence[Attempt], kept: Sequence[Attempt]) -> TaskStats:
    return TaskStats(
        attempted=len({a.key.instance_id for a in attempts}),
        solved=len({a.key.instance_id for a in attempts if a.verdict and a.verdict.resolved}),
        in_dataset=len({a.key.instance_id for a in kept}),
    )


@dataclass
class TokenStats:
    rows: int
    total: int
    assistant: int
    mean: float
    median: float
    p95: int
    max: int
    exact: bool

    @property
    def assistant_share(self) -> float:
        return self.assistant / self.total if self.total else 0.0


def token_stats(rows: Sequence[dict[str, Any]], exact: bool) -> TokenStats:
    lengths = sorted(int(r["num_tokens"]) for r in rows)
    if not lengths:
        return TokenStats(0, 0, 0, 0.0, 0.0, 0, 0, exact)
    p95 = lengths[min(len(lengths) - 1, max(0, round(0.95 * len(lengths)) - 1))]
    return TokenStats(
        rows=len(lengths),
        total=sum(lengths),
        assistant=sum(int(r["assistant_tokens"]) for r in rows),
        mean=statistics.fmean(lengths),
        median=statistics.median(lengths),
        p95=p95,
        max=lengths[-1],
        exact=exact,
    )
