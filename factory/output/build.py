"""What `factory build` and `factory push` do, as functions the command line calls.

    build_dataset(attempts, pipeline_yaml_text, out_dir, settings, meta=...) -> BuildSummary
    push(out_dir, repo_id, private=..., revision=..., token=...) -> PushResult

`build_dataset` re-filters a finished run's attempts and rewrites its dataset and card: no
new attempts are made, so other filter settings cost nothing but a rebuild.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field

from factory import __version__
from factory.errors import UsageError
from factory.filters import (
    ChainResult,
    Drop,
    FilterChain,
    FiltersConfig,
    Flag,
    StepStats,
    TokenCounter,
)
from factory.filters.base import key_id
from factory.output.attempts import attempt_rows
from factory.output.card import CardInputs, CardMeta, RenderInfo, build_card
from factory.output.hub import PushResult, push
from factory.output.rows import TokenizedRow
from factory.output.stats import language_stats, task_stats, teacher_stats, token_stats
from factory.output.validate import CARD, check_card
from factory.output.writer import DEFAULT_SHARD_BYTES, PLOTS, WrittenDataset, write_dataset
from factory.records import Attempt, Task
from factory.report.model import Plot
from factory.section import Section

CLI_OVERRIDES: dict[str, str] = {
    "per_task": "cap.per_task",
    "min_repeats": "loops.min_repeats",
    "max_period": "loops.max_period",
    "max_tokens": "length.max_tokens",
    "near_threshold": "dedup.near_threshold",
}
"""`factory build` option -> filter setting it overrides."""

Tokenize = Callable[[list[Attempt]], Sequence[TokenizedRow | Drop | Flag]]
"""Renders the kept attempts: one row per attempt, or a `render_failed` Drop for a row that
cannot be rendered exactly, and a Flag beside a row that differs from the tokens its teacher
sampled (`render_hooks` adapts factory.render's renderer)."""

DrawPlots = Callable[[ChainResult, WrittenDataset, Path], Sequence[Plot]]
"""Draws the run's plots into a folder once the filters decided (the chain holds every drop,
the renderer's too) and the rows are written (with their exact token counts), and says which it
drew; the card shows them. `factory.run.build_run` passes one that records the decisions and the
counts in the warehouse and draws from it."""


class BuildSettings(Section):
    filters: FiltersConfig = Field(default_factory=FiltersConfig)
    """Filter settings: the pipeline's `filters:` section with any command-line overrides."""
    max_shard_bytes: int = Field(DEFAULT_SHARD_BYTES, ge=1)
    """Arrow bytes per Parquet shard."""
    build_command: str | None = None
    """The `factory build ...` command line, shown in the card when the build is a rebuild."""
    include_failures: bool = False
    """Also write the `attempts` config: every graded attempt, failures too (`output.include_failures`)."""

    def with_overrides(self, **options: Any) -> BuildSettings:
        """Apply `factory build` options (`per_task=2, min_repeats=5, ...`); None means not given."""
        unknown = sorted(set(options) - set(CLI_OVERRIDES))
        if unknown:
            raise UsageError(f"unknown build option {unknown[0]!r}; valid options: {', '.join(CLI_OVERRIDES)}")
        dotted = {CLI_OVERRIDES[k]: v for k, v in options.items() if v is not None}
        return self.model_copy(update={"filters": self.filters.override(dotted)})


@dataclass
class BuildSummary:
    out_dir: Path
    card: Path
    chain: ChainResult
    written: WrittenDataset

    @property
    def rows(self) -> int:
        return len(self.written.rows)

    @property
    def drops(self) -> list[Drop]:
        return self.chain.drops

    @property
    def flags(self) -> list[Flag]:
        return self.chain.flags

    def format(self) -> str:
        lines = [f"funnel: {self.chain.format_funnel()}"]
        for step in self.chain.steps:
            if step.reasons or step.flags:
                parts = [f"{r} {n}" for r, n in step.reasons.most_common()] + [f"{f} {n}" for f, n in step.flags.items()]
                lines.append(f"  {step.name}: {', '.join(parts)}")
        for name, config in self.written.configs.items():
            lines.append(f"{name}: {config.rows} rows in {len(config.files)} file(s) under {self.out_dir / name}")
        lines.append(f"card: {self.card}")
        return "\n".join(lines)


def _run_ids(attempts: Sequence[Attempt]) -> str:
    return ", ".join(sorted({a.key.run_id for a in attempts}))


def _render(chain: ChainResult, tokenize: Tokenize) -> list[TokenizedRow]:
    """Tokenize the kept attempts; rows the renderer refuses leave the funnel in a `render` step."""
    results = list(tokenize(chain.kept))
    drops = [r for r in results if isinstance(r, Drop)]
    flags = [r for r in results if isinstance(r, Flag)]
    if drops or flags:
        dropped = {key_id(d.key) for d in drops}
        step = StepStats("render", len(chain.kept), len(chain.kept) - len(dropped), Counter(str(d.reason) for d in drops),
                         Counter(str(f.code) for f in flags))
        chain.kept = [a for a in chain.kept if key_id(a.key) not in dropped]
        chain.drops.extend(drops)
        chain.flags.extend(flags)
        chain.steps.append(step)
    return [r for r in results if isinstance(r, TokenizedRow)]


def build_dataset(
    attempts: Sequence[Attempt],
    pipeline_yaml_text: str,
    out_dir: Path | str,
    settings: BuildSettings | None = None,
    *,
    meta: CardMeta | None = None,
    tasks: Mapping[str, Task] | None = None,
    count_tokens: TokenCounter | None = None,
    tokenize: Tokenize | None = None,
    render_info: RenderInfo | None = None,
    built_at: datetime | None = None,
    plots: DrawPlots | None = None,
) -> BuildSummary:
    """Filter every attempt of a run, write the dataset and its card to `out_dir`, check the card.

    Pass the run's attempts (all of them: the card's pass rates and funnel count failures too),
    the pipeline file's text, and, once the renderer exists, `count_tokens` (exact counts for the
    length filter), `tokenize` and `render_info` (for the `tokenized` config and the card), and
    `plots` to draw the run's plots into `out_dir/plots/` for the card to show."""
    settings = settings or BuildSettings()
    if tokenize is not None and render_info is None:
        raise UsageError("a tokenized build needs render_info (chat template and tokenizer with their hashes)")
    out_dir = Path(out_dir)
    meta = meta or CardMeta()
    if not meta.run_id:
        meta = meta.model_copy(update={"run_id": _run_ids(attempts)})
    chain = FilterChain.from_config(settings.filters, count_tokens=count_tokens).run(list(attempts))
    tokenized = _render(chain, tokenize) if tokenize else None
    graded = (attempt_rows(attempts, chain, tasks=tasks, secrets=settings.filters.secrets)
              if settings.include_failures else None)
    written = write_dataset(
        chain.kept,
        out_dir,
        tasks=tasks,
        count_tokens=count_tokens,
        tokenized=tokenized,
        flags=chain.flags,
        attempt_rows=graded,
        max_shard_bytes=settings.max_shard_bytes,
    )
    drawn = list(plots(chain, written, out_dir / PLOTS)) if plots else []
    inputs = CardInputs(
        meta=meta,
        pipeline_yaml=pipeline_yaml_text,
        filters=settings.filters,
        chain=chain,
        teachers=teacher_stats(attempts, chain.kept),
        tasks=task_stats(attempts, chain.kept),
        languages=language_stats(attempts, chain.kept, tasks),
        tokens=token_stats(written.rows, written.tokens_exact),
        written=written,
        render=render_info,
        factory_version=__version__,
        built_at=(built_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC"),
        build_command=settings.build_command,
        plots=drawn,
    )
    card = out_dir / CARD
    card.write_text(build_card(inputs), encoding="utf-8")
    check_card(out_dir)
    return BuildSummary(out_dir, card, chain, written)


__all__ = ["CLI_OVERRIDES", "BuildSettings", "BuildSummary", "DrawPlots", "PushResult", "Tokenize", "build_dataset",
           "push"]
