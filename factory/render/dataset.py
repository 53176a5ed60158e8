"""The `tokenized` dataset config: rows TRL's SFTTrainer takes as pre-tokenized data, and stats.

Columns: `input_ids`, `assistant_masks` (1 on what the assistant wrote) and `labels` (the ids,
-100 where the mask is 0), then `instance_id` and per-row statistics. SFTTrainer sees `input_ids`
and skips its own tokenization; with `assistant_only_loss=True` it applies `assistant_masks`, and
any trainer that reads `labels` gets the same loss.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from factory.records import Trajectory
from factory.render.pieces import Rendered, RenderError
from factory.render.renderer import BatchRenderer

CONFIG_NAME = "tokenized"


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def row_stats(r: Rendered) -> dict[str, Any]:
    return {
        "num_tokens": r.num_tokens,
        "num_assistant_tokens": r.assistant_tokens,
        "num_tool_tokens": r.tool_tokens,
        "assistant_share": _share(r.assistant_tokens, r.num_tokens),
        "tool_share": _share(r.tool_tokens, r.num_tokens),
    }


def tokenized_row(r: Rendered, instance_id: str = "") -> dict[str, Any]:
    return {
        "input_ids": r.input_ids,
        "assistant_masks": r.assistant_masks,
        "labels": r.labels,
        "instance_id": instance_id,
        **row_stats(r),
    }


def tokenized_features() -> Any:
    """The `datasets.Features` of the config, so an empty shard still has the right schema."""
    from datasets import Features, Sequence, Value

    return Features(
        {
            "input_ids": Sequence(Value("int32")),
            "assistant_masks": Sequence(Value("int8")),
            "labels": Sequence(Value("int32")),
            "instance_id": Value("string"),
            "num_tokens": Value("int32"),
            "num_assistant_tokens": Value("int32"),
            "num_tool_tokens": Value("int32"),
            "assistant_share": Value("float32"),
            "tool_share": Value("float32"),
        }
    )


@dataclass
class RenderStats:
    """Dataset-level totals; adds up across shards and workers."""

    rows: int = 0
    tokens: int = 0
    assistant_tokens: int = 0
    tool_tokens: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    """Rows that could not be rendered exactly, by reason (`boundary_drift`, `bad_arguments`, ...)."""

    def add(self, row: Rendered | RenderError) -> None:
        if isinstance(row, RenderError):
            self.dropped[row.reason] += 1
            return
        self.rows += 1
        self.tokens += row.num_tokens
        self.assistant_tokens += row.assistant_tokens
        self.tool_tokens += row.tool_tokens

    def __add__(self, other: RenderStats) -> RenderStats:
        return RenderStats(
            self.rows + other.rows,
            self.tokens + other.tokens,
            self.assistant_tokens + other.assistant_tokens,
            self.tool_tokens + other.tool_tokens,
            self.dropped + other.dropped,
        )

    @property
    def assistant_share(self) -> float:
        return _share(self.assistant_tokens, self.tokens)

    @property
    def tool_share(self) -> float:
        return _share(self.tool_tokens, self.tokens)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "tokens": self.tokens,
            "assistant_tokens": self.assistant_tokens,
            "tool_tokens": self.tool_tokens,
            "assistant_share": round(self.assistant_share, 4),
            "tool_share": round(self.tool_share, 4),
            "dropped": dict(self.dropped),
        }


def render_trajectories(
    trajectories: Iterable[Trajectory], renderer: BatchRenderer, batch_size: int = 64
) -> Iterator[tuple[Trajectory, Rendered | RenderError]]:
    """Each trajectory with its render or the reason it has none, in batches for the tokenizer."""
    it = iter(trajectories)
    while batch := list(islice(it, batch_size)):
        rows = renderer.render_batch([(t.messages, t.tools) for t in batch])
        yield from zip(batch, rows, strict=True)


def tokenized_rows(
    trajectories: Iterable[Trajectory], renderer: BatchRenderer, stats: RenderStats
) -> Iterator[dict[str, Any]]:
    """Rows of the `tokenized` config; `stats` counts kept rows and every drop by reason."""
    for traj, row in render_trajectories(trajectories, renderer):
        stats.add(row)
        if isinstance(row, Rendered):
            yield tokenized_row(row, traj.instance_id)


def tokenized_dataset(trajectories: Iterable[Trajectory], renderer: BatchRenderer) -> tuple[Any, RenderStats]:
    """An in-memory `datasets.Dataset` of the config and its statistics."""
    from datasets import Dataset

    stats = RenderStats()
    rows = list(tokenized_rows(trajectories, renderer, stats))
    return Dataset.from_list(rows, features=tokenized_features()), stats
