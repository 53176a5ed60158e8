"""The funnel: filters run in order, every drop and flag counted with its reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from factory.errors import UsageError
from factory.filters.base import BaseFilter, FilterResult, key_id
from factory.filters.length import TokenCounter
from factory.filters.registry import FiltersConfig, build_filter
from factory.records import Attempt


@dataclass
class StepStats:
    name: str
    n_in: int
    n_out: int
    reasons: Counter[str] = field(default_factory=Counter)
    """Drop reason code -> how many attempts this step dropped for it."""
    flags: Counter[str] = field(default_factory=Counter)

    @property
    def dropped(self) -> int:
        return self.n_in - self.n_out


@dataclass
class ChainResult(FilterResult):
    n_attempts: int = 0
    steps: list[StepStats] = field(default_factory=list)

    def funnel(self) -> list[tuple[str, int]]:
        """(stage, rows left): `attempts` first, then each filter."""
        return [("attempts", self.n_attempts)] + [(s.name, s.n_out) for s in self.steps]

    def format_funnel(self) -> str:
        return " -> ".join(f"{name} {count}" for name, count in self.funnel())


class FilterChain(BaseFilter):
    name: ClassVar[str] = "chain"

    def __init__(self, filters: Sequence[BaseFilter]):
        self.filters = list(filters)

    @classmethod
    def from_config(cls, config: FiltersConfig | None = None, *,
                    count_tokens: TokenCounter | None = None) -> FilterChain:
        config = config or FiltersConfig()
        return cls([build_filter(name, options, count_tokens=count_tokens) for name, options in config.enabled()])

    def run(self, attempts: list[Attempt]) -> ChainResult:
        seen: set[tuple[str, str, str, int]] = set()
        for attempt in attempts:
            if key_id(attempt.key) in seen:
                raise UsageError(f"attempt {attempt.key.model_dump()} appears twice in the filter input")
            seen.add(key_id(attempt.key))
        result = ChainResult(kept=list(attempts), n_attempts=len(attempts))
        for stage in self.filters:
            step = stage.run(result.kept)
            result.steps.append(
                StepStats(
                    name=stage.name,
                    n_in=len(result.kept),
                    n_out=len(step.kept),
                    reasons=Counter(str(d.reason) for d in step.drops),
                    flags=Counter(str(f.code) for f in step.flags),
                )
            )
            result.kept = step.kept
            result.drops.extend(step.drops)
            result.flags.extend(step.flags)
        return result

