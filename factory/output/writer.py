"""Writes the dataset: one folder of Parquet shards per config under the run's output folder.

    OUT/README.md                                 the dataset card
    OUT/messages/train-00000-of-00001.parquet     TRL conversational rows + metadata
    OUT/tokenized/train-00000-of-00001.parquet    renderer output (when rendered)
    OUT/attempts/train-00000-of-00001.parquet     every graded attempt, failures too (output.include_failures)
    OUT/plots/*.png                               the run's plots (factory report's), shown by the card

Shards are about `max_shard_bytes` of Arrow data each. Rewriting replaces these folders, so a
rebuild with fewer rows leaves no stale shard behind, nor plots the new card does not show.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datasets import Dataset, Features
from datasets.utils import logging as ds_logging

from factory.errors import UsageError
from factory.filters import Flag, FlagCode, TokenCounter, TokenCounts, approx_token_counts, is_exact
from factory.filters.base import key_id
from factory.output.attempts import ATTEMPTS_FEATURES
from factory.output.rows import (
    MESSAGES_FEATURES,
    TOKENIZED_FEATURES,
    TokenizedRow,
    messages_row,
    ordered,
    tokenized_row,
)
from factory.records import Attempt, Task

MESSAGES = "messages"
TOKENIZED = "tokenized"
ATTEMPTS = "attempts"
ROW_CONFIGS = (MESSAGES, TOKENIZED)
"""The configs whose rows are the kept rows, one for one."""
CONFIGS = (*ROW_CONFIGS, ATTEMPTS)
PLOTS = "plots"
SPLIT = "train"
DEFAULT_SHARD_BYTES = 256 * 1024 * 1024


def data_files_pattern(config: str) -> str:
    return f"{config}/{SPLIT}-*.parquet"


@dataclass
class WrittenConfig:
    name: str
    files: list[Path]
    rows: int
    num_bytes: int


@dataclass
class WrittenDataset:
    out_dir: Path
    configs: dict[str, WrittenConfig]
    rows: list[dict[str, Any]]
    """The `messages` rows as written (their token counts feed the card)."""
    tokens_exact: bool


def _write_config(rows: list[dict[str, Any]], features: Features, out_dir: Path, name: str,
                  max_shard_bytes: int) -> WrittenConfig:
    folder = out_dir / name
    folder.mkdir(parents=True)
    if rows:
        dataset = Dataset.from_list(rows, features=features)
    else:
        dataset = Dataset.from_dict({column: [] for column in features}, features=features)
    num_shards = max(1, min(len(dataset), math.ceil(dataset.data.nbytes / max_shard_bytes)))
    files = []
    for index in range(num_shards):
        path = folder / f"{SPLIT}-{index:05d}-of-{num_shards:05d}.parquet"
        dataset.shard(num_shards=num_shards, index=index, contiguous=True).to_parquet(str(path))
        files.append(path)
    return WrittenConfig(name, files, len(dataset), dataset.data.nbytes)


def write_dataset(
    kept: Sequence[Attempt],
    out_dir: Path,
    *,
    tasks: Mapping[str, Task] | None = None,
    count_tokens: TokenCounter | None = None,
    tokenized: Sequence[TokenizedRow] | None = None,
    flags: Sequence[Flag] = (),
    attempt_rows: Sequence[dict[str, Any]] | None = None,
    max_shard_bytes: int = DEFAULT_SHARD_BYTES,
) -> WrittenDataset:
    """Write the kept attempts as the `messages` config, and `tokenized` when rows are given.

    `tasks` (by instance id) supply FAIL_TO_PASS and, where an attempt lacks it, the repo.
    Token counts in `messages` come from the tokenized rows when given (exact), else from
    `count_tokens`, else from the character estimate (marked `tokens_exact: false`). With
    `attempt_rows` (`factory.output.attempts`), the `attempts` config is written too."""
    attempts = ordered(kept)
    by_key = {key_id(t.key): t for t in tokenized or ()}
    if tokenized is not None:
        missing = [a.key for a in attempts if key_id(a.key) not in by_key]
        if missing:
            shown = ", ".join(f"{k.instance_id} {k.teacher}#{k.index}" for k in missing[:5])
            raise UsageError(f"{len(missing)} kept attempts have no tokenized row (first: {shown})")
    counter = count_tokens or approx_token_counts
    flagged = {key_id(f.key) for f in flags if f.code is FlagCode.secret_redacted}
    tasks = tasks or {}
    rows = []
    for attempt in attempts:
        counts: TokenCounts
        if tokenized is not None:
            counts, exact = by_key[key_id(attempt.key)].counts, True
        else:
            assert attempt.trajectory is not None
            counts, exact = counter(attempt.trajectory), is_exact(counter)
        rows.append(
            messages_row(
                attempt,
                task=tasks.get(attempt.key.instance_id),
                counts=counts,
                counts_exact=exact,
                secrets_redacted=key_id(attempt.key) in flagged,
            )
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in (*CONFIGS, PLOTS):
        shutil.rmtree(out_dir / name, ignore_errors=True)
    quiet = not ds_logging.is_progress_bar_enabled()
    ds_logging.disable_progress_bar()
    try:
        configs = {MESSAGES: _write_config(rows, MESSAGES_FEATURES, out_dir, MESSAGES, max_shard_bytes)}
        if tokenized is not None:
            token_rows = [tokenized_row(by_key[key_id(a.key)]) for a in attempts]
            configs[TOKENIZED] = _write_config(token_rows, TOKENIZED_FEATURES, out_dir, TOKENIZED, max_shard_bytes)
        if attempt_rows is not None:
            configs[ATTEMPTS] = _write_config(list(attempt_rows), ATTEMPTS_FEATURES, out_dir, ATTEMPTS, max_shard_bytes)
    finally:
        if not quiet:
            ds_logging.enable_progress_bar()
    exact = tokenized is not None or is_exact(counter)
    return WrittenDataset(out_dir, configs, rows, exact)
