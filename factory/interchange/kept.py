"""The rows an export starts from, as records: a built dataset's kept rows, or a run's attempts.

    read_kept(dataset/)                      the rows the filters kept (`--filter kept`), credentials
                                             already redacted by the `secrets` filter
    read_graded(attempts, which, secrets)    the run's graded attempts, resolved, failed or all, kept
                                             or not, redacted here with the `secrets` filter's scanner
                                             whatever its `action` (most never reached the filter)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from factory.errors import UsageError
from factory.filters import SecretsConfig, SecretsFilter
from factory.output.attempts import graded
from factory.output.rows import ordered
from factory.output.writer import MESSAGES
from factory.records import Attempt, Message, ToolCall


class Which(StrEnum):
    """`factory export --filter`: which of a run's rows go out."""

    kept = "kept"
    """The dataset's rows: resolved and kept by every filter."""
    resolved = "resolved"
    """Every graded attempt the hidden tests passed, whatever the filters said of it."""
    failed = "failed"
    """Every graded attempt the hidden tests did not pass (or that never submitted)."""
    all = "all"
    """Every graded attempt; infrastructure errors are not the model's and never go out."""


@dataclass(frozen=True)
class KeptRow:
    instance_id: str
    run_id: str
    teacher: str
    attempt: int
    messages: list[Message]
    tools: list[dict[str, Any]]
    resolved: bool = True
    """The verdict; rows of the dataset are all resolved."""

    @property
    def label(self) -> str:
        return f"{self.instance_id}/{self.teacher}/{self.attempt}"


def _message(row: dict[str, Any]) -> Message:
    calls = [ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
             for c in row["tool_calls"] or []]
    return Message(role=row["role"], content=row["content"] or "", reasoning=row["reasoning_content"],
                   tool_calls=calls, tool_call_id=row["tool_call_id"], name=row["name"])


def _tool(value: Any) -> dict[str, Any]:
    return json.loads(value) if isinstance(value, str) else value  # `datasets.Json` is stored as text


def read_kept(dataset_dir: Path) -> list[KeptRow]:
    """Every row of `dataset_dir/messages/*.parquet`, in the dataset's order."""
    shards = sorted((dataset_dir / MESSAGES).glob("*.parquet"))
    if not shards:
        raise UsageError(f"{dataset_dir}: no {MESSAGES}/*.parquet; build the dataset first (factory build RUN)")
    rows = []
    for shard in shards:
        for row in pq.read_table(shard).to_pylist():
            rows.append(KeptRow(
                instance_id=row["instance_id"], run_id=row["run_id"], teacher=row["teacher"], attempt=row["attempt"],
                messages=[_message(m) for m in row["messages"]], tools=[_tool(t) for t in row["tools"] or []],
            ))
    return rows


def read_graded(attempts: list[Attempt], which: Which, secrets: SecretsConfig | None = None) -> list[KeptRow]:
    """The run's graded attempts that `which` names, in the dataset's order, credentials redacted."""
    if which is Which.kept:
        raise ValueError("kept rows come from the dataset: read_kept")
    scanner = SecretsFilter(secrets)
    rows = []
    for original in ordered(attempts):
        resolved = bool(original.verdict and original.verdict.resolved)
        if not graded(original) or (which is Which.resolved and not resolved) or (which is Which.failed and resolved):
            continue
        attempt, _, _ = scanner.scan(original)
        trajectory = attempt.trajectory
        assert trajectory is not None  # graded
        rows.append(KeptRow(instance_id=attempt.key.instance_id, run_id=attempt.key.run_id,
                            teacher=attempt.key.teacher, attempt=attempt.key.index, messages=list(trajectory.messages),
                            tools=list(trajectory.tools), resolved=resolved))
    return rows
