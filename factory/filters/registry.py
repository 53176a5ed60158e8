"""Filters by name, and `FiltersConfig`: the `filters:` section of a pipeline.

    filters:
      loops: {min_repeats: 10}
      cap: {per_task: 3}
      secrets: {action: redact}

Every filter runs by default, in `FILTER_ORDER`; `enabled: false` turns one off.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from factory.errors import UsageError
from factory.filters.base import BaseFilter, DropReason
from factory.filters.cap import CapConfig, CapFilter
from factory.filters.dedup import DedupConfig, DedupFilter
from factory.filters.length import LengthConfig, LengthFilter, TokenCounter
from factory.filters.loops import LoopsConfig, LoopsFilter
from factory.filters.resolved import ResolvedConfig, ResolvedFilter
from factory.filters.secrets import SecretsConfig, SecretsFilter
from factory.registry import Registry


@dataclass(frozen=True)
class FilterSpec:
    config: type[BaseModel]
    build: Callable[[Any, TokenCounter | None], BaseFilter]
    summary: str
    """What the filter keeps: its `filters:` field's documentation."""
    reasons: Mapping[str, str]
    """The drop reason codes it uses, each with what it means (the card's glossary)."""


FILTERS: Registry[FilterSpec] = Registry("filter")
"""Adding a filter: its module (the filter, its config, its reasons) and one `add` here, in its
place in the chain. The pipeline's `filters:` section, the card's glossary and the warehouse's
funnel steps follow."""
FILTERS.add("resolved", FilterSpec(ResolvedConfig, lambda c, _: ResolvedFilter(c), "verified runs that submitted",
                                   ResolvedFilter.reasons))
FILTERS.add("loops", FilterSpec(LoopsConfig, lambda c, _: LoopsFilter(c), "no repeated actions or short cycles",
                                LoopsFilter.reasons))
FILTERS.add("length", FilterSpec(LengthConfig, lambda c, n: LengthFilter(c, n), "rendered rows within a token limit",
                                 LengthFilter.reasons))
FILTERS.add("dedup", FilterSpec(DedupConfig, lambda c, _: DedupFilter(c), "one run per way of solving a task",
                                DedupFilter.reasons))
FILTERS.add("cap", FilterSpec(CapConfig, lambda c, _: CapFilter(c), "at most N diverse runs per task",
                              CapFilter.reasons))
FILTERS.add("secrets", FilterSpec(SecretsConfig, lambda c, _: SecretsFilter(c), "credentials redacted",
                                  SecretsFilter.reasons))
FILTER_ORDER: tuple[str, ...] = tuple(FILTERS)
"""The order they were added in: cheap per-run checks first; the cap after dedup so duplicates
never use up a task's slots; secrets last so that exactly what is published is scanned."""
RENDER_STEP = "render"
"""The funnel's step after the filters: rows the chat template cannot render are dropped there."""
RENDER_REASONS = {DropReason.render_failed: "the chat template could not render it exactly"}
FUNNEL_STEPS: tuple[str, ...] = (*FILTER_ORDER, RENDER_STEP)


def drop_meanings() -> dict[str, str]:
    """Every drop reason code, in funnel order, with what it means."""
    return {code: meaning for spec in FILTERS.values() for code, meaning in spec.reasons.items()} | RENDER_REASONS


def filter_spec(name: str) -> FilterSpec:
    """`FILTERS.get`: an unknown name lists the valid ones."""
    return FILTERS.get(name)


def build_filter(name: str, options: BaseModel | dict[str, Any] | None = None, *,
                 count_tokens: TokenCounter | None = None) -> BaseFilter:
    """One filter from its name and options (a dict is validated against its config model)."""
    spec = filter_spec(name)
    if not isinstance(options, BaseModel):
        try:
            options = spec.config.model_validate(options or {})
        except ValidationError as exc:
            raise UsageError(f"filters.{name}: {exc.errors()[0]['msg']} ({_loc(exc)})") from exc
    return spec.build(options, count_tokens)


def _loc(exc: ValidationError) -> str:
    return ".".join(str(p) for p in exc.errors()[0]["loc"]) or "options"


class _Filters(BaseModel):
    """Settings of every filter; embed it as the pipeline's `filters:` section. Its fields come
    from `FILTERS`, one per filter, each defaulting to its config's defaults."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    @model_validator(mode="before")
    @classmethod
    def _known_names(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name in data:
                FILTERS.check(name)
        return data

    def override(self, settings: dict[str, Any]) -> _Filters:
        """A copy with dotted settings replaced, e.g. `{"cap.per_task": 2, "loops.min_repeats": 5}`
        (what `factory build --per-task 2 --min-repeats 5` passes)."""
        data = self.model_dump()
        for dotted, value in settings.items():
            name, _, field = dotted.partition(".")
            config = FILTERS.get(name).config
            if field not in config.model_fields:
                valid = ", ".join(config.model_fields)
                raise UsageError(f"filter {name!r} has no setting {field!r}; valid settings: {valid}")
            data[name][field] = value
        try:
            return type(self).model_validate(data)
        except ValidationError as exc:
            raise UsageError(f"filters.{_loc(exc)}: {exc.errors()[0]['msg']}") from exc

    def enabled(self) -> list[tuple[str, BaseModel]]:
        """(name, config) of the filters that run, in `FILTER_ORDER`."""
        configs = [(name, getattr(self, name)) for name in FILTER_ORDER]
        return [(name, config) for name, config in configs if config.enabled]


FiltersConfig = create_model(
    "FiltersConfig", __base__=_Filters, __module__=__name__,
    **{name: (spec.config, Field(default_factory=spec.config, description=spec.summary)) for name, spec in FILTERS.items()},
)
