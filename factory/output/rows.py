"""The rows of the two dataset configs and their `datasets` features.

`messages` is TRL's conversational layout: `messages` (OpenAI chat layout, tool-call
arguments as JSON strings, every key present in every message so Arrow has one schema) and
`tools` (the JSON schemas, stored with `datasets.Json` so each tool keeps its own shape),
plus metadata about the run. `tokenized` holds what the renderer made: `input_ids`,
`assistant_masks` (1 where the loss is computed) and `labels` (-100 elsewhere).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from datasets import Features, Json, List, Value

from factory.filters import TokenCounts
from factory.records import Attempt, AttemptKey, Message, Task

_STRING = Value("string")

MESSAGE_FEATURE = {
    "role": _STRING,
    "content": _STRING,
    "reasoning_content": _STRING,
    "tool_calls": List({"id": _STRING, "type": _STRING, "function": {"name": _STRING, "arguments": _STRING}}),
    "tool_call_id": _STRING,
    "name": _STRING,
}

_KEY_FEATURES = {
    "instance_id": _STRING,
    "run_id": _STRING,
    "teacher": _STRING,
    "attempt": Value("int32"),
}

MESSAGES_FEATURES = Features(
    {
        "messages": List(MESSAGE_FEATURE),
        "tools": List(Json()),
        **_KEY_FEATURES,
        "repo": _STRING,
        "language": _STRING,
        "model": _STRING,
        "harness": _STRING,
        "scripted": Value("bool"),
        "verified_by": _STRING,
        "guarantee": _STRING,
        "reward": Value("float64"),
        "turns": Value("int32"),
        "exit": _STRING,
        "patch": _STRING,
        "FAIL_TO_PASS": List(_STRING),
        "num_tokens": Value("int64"),
        "assistant_tokens": Value("int64"),
        "assistant_token_share": Value("float64"),
        "tokens_exact": Value("bool"),
        "cost_usd": Value("float64"),
        "secrets_redacted": Value("bool"),
    }
)

TOKENIZED_FEATURES = Features(
    {
        **_KEY_FEATURES,
        "input_ids": List(Value("int32")),
        "assistant_masks": List(Value("int8")),
        "labels": List(Value("int32")),
        "num_tokens": Value("int64"),
        "assistant_tokens": Value("int64"),
    }
)

IGNORE_INDEX = -100

DATASETS_REQUIREMENT = "datasets>=4.7"
"""What loading the dataset needs (said on the card): `datasets.Json`, the `tools` feature, came in 4.7."""


@dataclass(frozen=True)
class TokenizedRow:
    """One kept attempt as the renderer tokenized it (chat template applied)."""

    key: AttemptKey
    input_ids: Sequence[int]
    assistant_masks: Sequence[int]
    """1 for tokens the loss is computed on (the assistant's), 0 for context."""
    labels: Sequence[int] | None = None
    """input_ids with IGNORE_INDEX outside the mask; made from the mask when not given."""

    def __post_init__(self) -> None:
        if len(self.input_ids) != len(self.assistant_masks):
            raise ValueError(
                f"{self.key.instance_id} {self.key.teacher}#{self.key.index}: "
                f"{len(self.input_ids)} input_ids but {len(self.assistant_masks)} assistant_masks"
            )
        if self.labels is not None and len(self.labels) != len(self.input_ids):
            raise ValueError(f"{self.key.instance_id}: labels and input_ids differ in length")

    @property
    def counts(self) -> TokenCounts:
        return TokenCounts.from_mask(list(self.assistant_masks))


def ordered(attempts: Sequence[Attempt]) -> list[Attempt]:
    """The dataset's order of rows: by task, teacher, attempt index."""
    return sorted(attempts, key=lambda a: (a.key.instance_id, a.key.teacher, a.key.index, a.key.run_id))


def message_dict(message: Message) -> dict[str, Any]:
    return {
        "role": message.role,
        "content": message.content,
        "reasoning_content": message.reasoning,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ],
        "tool_call_id": message.tool_call_id,
        "name": message.name,
    }


def messages_row(
    attempt: Attempt,
    *,
    task: Task | None,
    counts: TokenCounts,
    counts_exact: bool,
    secrets_redacted: bool,
) -> dict[str, Any]:
    trajectory = attempt.trajectory
    if trajectory is None:
        raise ValueError(f"attempt {attempt.key.model_dump()} has no trajectory to write")
    return {
        "messages": [message_dict(m) for m in trajectory.messages],
        "tools": list(trajectory.tools),
        "instance_id": attempt.key.instance_id,
        "run_id": attempt.key.run_id,
        "teacher": attempt.key.teacher,
        "attempt": attempt.key.index,
        "repo": attempt.repo or (task.repo if task else ""),
        "language": task.language if task else "",
        "model": trajectory.model,
        "harness": trajectory.harness,
        "scripted": trajectory.scripted,
        "verified_by": attempt.verdict.verified_by.value if attempt.verdict else None,  # None: the resolved filter was off
        "guarantee": attempt.verdict.guarantee.value if attempt.verdict else None,
        "reward": attempt.verdict.reward if attempt.verdict else None,
        "turns": sum(1 for m in trajectory.messages if m.role == "assistant"),
        "exit": trajectory.exit.value,
        "patch": trajectory.patch,
        "FAIL_TO_PASS": list(task.FAIL_TO_PASS) if task else [],
        "num_tokens": counts.total,
        "assistant_tokens": counts.assistant,
        "assistant_token_share": round(counts.assistant_share, 4),
        "tokens_exact": counts_exact,
        "cost_usd": trajectory.cost_usd,
        "secrets_redacted": secrets_redacted,
    }


def tokenized_row(row: TokenizedRow) -> dict[str, Any]:
    masks = [1 if m else 0 for m in row.assistant_masks]
    labels = list(row.labels) if row.labels is not None else [
        t if m else IGNORE_INDEX for t, m in zip(row.input_ids, masks, strict=True)
    ]
    counts = row.counts
    return {
        "instance_id": row.key.instance_id,
        "run_id": row.key.run_id,
        "teacher": row.key.teacher,
        "attempt": row.key.index,
        "input_ids": list(row.input_ids),
        "assistant_masks": masks,
        "labels": labels,
        "num_tokens": counts.total,
        "assistant_tokens": counts.assistant,
    }
