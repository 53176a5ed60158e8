"""What one exported row is (`--rows`) and what it says of reasoning (`--thinking`).

    attempt   the whole conversation, every assistant turn trained
    step      one row per assistant turn: the conversation up to and including that turn, trained
              on that turn only (the earlier turns are context, as they were when it was sampled)
    last      the whole conversation up to its final assistant turn, trained on that turn only
              (Harbor's `--episodes last`)

A row ends with the assistant turn it trains: tool results after it (the answer to `submit`) teach
nothing. Which assistant turns are in the loss travels with the row (`trained`), so each format
says it in its own way: OpenAI's `weight: 0`, LLaMA-Factory's `mask_history`, TRL's completion.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from factory.interchange.kept import KeptRow
from factory.records import Message


class RowShape(StrEnum):
    attempt = "attempt"
    step = "step"
    last = "last"


class ThinkingPolicy(StrEnum):
    """Where a row keeps the teacher's reasoning (the renderer's `thinking` decides the same for
    the `tokenized` config; here the row itself is changed, since a trainer renders it again)."""

    keep = "keep"
    """Reasoning on every assistant turn that has it, in context and in the loss."""
    context = "context"
    """Reasoning only on turns that are not trained: a step's earlier turns keep theirs as context,
    the trained turn loses its own, so no reasoning token is ever in the loss. Attempt rows train
    every turn, so they keep none."""
    drop = "drop"
    """No reasoning anywhere."""


@dataclass(frozen=True)
class ExportRow:
    row: KeptRow
    messages: list[Message]
    trained: frozenset[int]
    """Indices (in `messages`) of the assistant turns in the loss."""
    step: int | None = None
    """For step rows: which assistant turn (0-based) the row trains."""

    @property
    def label(self) -> str:
        return self.row.label if self.step is None else f"{self.row.label}/step{self.step}"

    @property
    def trains_every_turn(self) -> bool:
        return self.trained == {i for i, m in enumerate(self.messages) if m.role == "assistant"}


def _thought(messages: list[Message], trained: frozenset[int], policy: ThinkingPolicy) -> list[Message]:
    def strip(i: int) -> bool:
        return policy is ThinkingPolicy.drop or (policy is ThinkingPolicy.context and i in trained)

    return [m.model_copy(update={"reasoning": None}) if m.role == "assistant" and m.reasoning and strip(i) else m
            for i, m in enumerate(messages)]


def shape_rows(rows: list[KeptRow], shape: RowShape, thinking: ThinkingPolicy = ThinkingPolicy.keep) -> list[ExportRow]:
    """Each row as `shape` cuts it, reasoning as `thinking` places it; a row without an assistant
    turn makes no row."""
    out = []
    for row in rows:
        turns = [i for i, m in enumerate(row.messages) if m.role == "assistant"]
        if not turns:
            continue
        if shape is RowShape.attempt:
            cuts = [(turns[-1], frozenset(turns), None)]
        elif shape is RowShape.last:
            cuts = [(turns[-1], frozenset(turns[-1:]), None)]
        else:
            cuts = [(i, frozenset([i]), k) for k, i in enumerate(turns)]
        for end, trained, step in cuts:
            messages = _thought(row.messages[: end + 1], trained, thinking)
            out.append(ExportRow(row, messages, trained, step))
    return out
