"""The kept rows of a built dataset, read back from its `messages` Parquet shards as records.

Exports start here rather than from the attempt files: these are the rows the filters kept,
with credentials already redacted by the `secrets` filter.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from factory.errors import UsageError
from factory.output.writer import MESSAGES
from factory.records import Message, ToolCall


@dataclass(frozen=True)
class KeptRow:
    instance_id: str
    run_id: str
    teacher: str
    attempt: int
    messages: list[Message]
    tools: list[dict[str, Any]]

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
