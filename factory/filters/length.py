"""`length`: drop rows longer than the student can be trained on.

The count comes from a function given to the filter, so the same filter works with the
renderer's exact counts (chat template + tokenizer) and, before any renderer exists, with
`approx_token_counts`: about four characters a token, labelled as an estimate wherever used.
A row the counter refuses with a `FactoryError` (the renderer's `RenderError`) cannot be
trained on either: it is dropped as `render_failed`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from pydantic import Field

from factory.errors import FactoryError
from factory.filters.base import AttemptFilter, DropReason, Rejection
from factory.records import Attempt, Message, Trajectory
from factory.section import Section


@dataclass(frozen=True)
class TokenCounts:
    total: int
    """Tokens of the whole rendered row."""
    assistant: int
    """Tokens the loss is computed on (the assistant's turns)."""

    @property
    def assistant_share(self) -> float:
        return self.assistant / self.total if self.total else 0.0

    @classmethod
    def from_mask(cls, assistant_masks: list[int]) -> TokenCounts:
        return cls(total=len(assistant_masks), assistant=sum(1 for m in assistant_masks if m))


TokenCounter = Callable[[Trajectory], TokenCounts]
"""Counts a trajectory's tokens as rendered for training."""

CHARS_PER_TOKEN = 4


def _message_chars(message: Message) -> int:
    chars = len(message.content) + len(message.reasoning or "")
    for call in message.tool_calls:
        chars += len(call.name) + len(call.arguments)
    return chars


class ApproxTokenCounter:
    """An estimate for use without a tokenizer: characters / 4, tool schemas included."""

    exact = False

    def __call__(self, trajectory: Trajectory) -> TokenCounts:
        total = len(json.dumps(trajectory.tools)) if trajectory.tools else 0
        assistant = 0
        for message in trajectory.messages:
            chars = _message_chars(message)
            total += chars
            if message.role == "assistant":
                assistant += chars
        return TokenCounts(total=-(-total // CHARS_PER_TOKEN), assistant=-(-assistant // CHARS_PER_TOKEN))


approx_token_counts = ApproxTokenCounter()


def is_exact(counter: TokenCounter) -> bool:
    """Whether a counter gives real token counts (counters are exact unless marked otherwise)."""
    return getattr(counter, "exact", True)


class LengthConfig(Section):
    enabled: bool = True
    """Run this filter."""
    max_tokens: int = Field(32768, ge=1)
    """Drop a row whose rendered length is above this many tokens."""


class LengthFilter(AttemptFilter):
    name: ClassVar[str] = "length"
    reasons: ClassVar[dict[str, str]] = {
        DropReason.too_long: "longer than the token limit",
    }

    def __init__(self, config: LengthConfig | None = None, count_tokens: TokenCounter | None = None):
        self.config = config or LengthConfig()
        self.count_tokens = count_tokens or approx_token_counts

    def check(self, attempt: Attempt) -> Rejection | None:
        if attempt.trajectory is None:
            return None
        try:
            total = self.count_tokens(attempt.trajectory).total
        except FactoryError as exc:  # the renderer refuses rows it cannot render exactly
            return Rejection(DropReason.render_failed, f"{getattr(exc, 'reason', type(exc).__name__)}: {exc}")
        if total > self.config.max_tokens:
            estimate = "" if is_exact(self.count_tokens) else "about "
            return Rejection(DropReason.too_long, f"{estimate}{total} tokens > {self.config.max_tokens}")
        return None
