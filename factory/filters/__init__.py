"""Filters: pure stages that keep the runs worth teaching and name a reason for every drop.

    attempts ─► resolved ─► loops ─► length ─► dedup ─► cap ─► secrets ─► kept
                   └──────── every drop: Drop(key, filter, reason, detail) ───────┘

`FilterChain.from_config(FiltersConfig(...)).run(attempts)` returns the kept attempts (with
secrets redacted), every `Drop` and `Flag`, and per-filter counts for the funnel.
"""

from factory.filters.actions import actions, normalize_arguments, normalize_patch
from factory.filters.base import (
    AttemptFilter,
    BaseFilter,
    Drop,
    DropReason,
    FilterResult,
    Flag,
    FlagCode,
    Rejection,
    TaskFilter,
)
from factory.filters.cap import CapConfig, CapFilter
from factory.filters.chain import ChainResult, FilterChain, StepStats
from factory.filters.dedup import DedupConfig, DedupFilter
from factory.filters.length import (
    LengthConfig,
    LengthFilter,
    TokenCounter,
    TokenCounts,
    approx_token_counts,
    is_exact,
)
from factory.filters.loops import LoopsConfig, LoopsFilter, find_loop
from factory.filters.registry import (
    FILTER_ORDER,
    FILTERS,
    FUNNEL_STEPS,
    RENDER_STEP,
    FiltersConfig,
    build_filter,
    drop_meanings,
    filter_spec,
)
from factory.filters.resolved import ResolvedConfig, ResolvedFilter
from factory.filters.secrets import SecretScanner, SecretsConfig, SecretsFilter

__all__ = [
    "FILTER_ORDER",
    "FUNNEL_STEPS",
    "RENDER_STEP",
    "drop_meanings",
    "FILTERS",
    "AttemptFilter",
    "BaseFilter",
    "CapConfig",
    "CapFilter",
    "ChainResult",
    "DedupConfig",
    "DedupFilter",
    "Drop",
    "DropReason",
    "FilterChain",
    "FilterResult",
    "FiltersConfig",
    "Flag",
    "FlagCode",
    "LengthConfig",
    "LengthFilter",
    "LoopsConfig",
    "LoopsFilter",
    "Rejection",
    "ResolvedConfig",
    "ResolvedFilter",
    "SecretScanner",
    "SecretsConfig",
    "SecretsFilter",
    "StepStats",
    "TaskFilter",
    "TokenCounter",
    "TokenCounts",
    "actions",
    "approx_token_counts",
    "build_filter",
    "filter_spec",
    "find_loop",
    "is_exact",
    "normalize_arguments",
    "normalize_patch",
]
