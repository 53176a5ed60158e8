"""Whether the renderer's tokens of a trajectory are the tokens its teacher's server sampled.

A teacher that records tokens (`record_tokens`) keeps, per turn, the ids the engine sampled and
the ids of the prompt it rendered (`Turn.sampled`). An RL trainer scores the ids; an SFT trainer
trains on the renderer's. Where the two differ (another template, reasoning dropped from the
history, text that tokenizes another way once re-read) the rows disagree with what was sampled,
so every such turn is told, never smoothed over.

The k-th run of trained tokens in the render is the k-th assistant turn (every template lays an
assistant turn out as one trained span between untrained headers), and the ids before it are
that turn's prompt with its generation header. A turn matches when its sampled ids are that span,
or that span without its last token (the end-of-turn token, which some servers leave out).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from factory.records import Turn


class Differs(StrEnum):
    """What of a recorded turn the render does not reproduce."""

    completion = "completion"
    """The sampled ids are not the render's trained span of that turn."""
    prompt = "prompt"
    """The prompt ids the server reported are not the render's ids before that span."""
    unaligned = "unaligned"
    """The render has another number of assistant spans than the trajectory has turns."""


@dataclass(frozen=True)
class TurnDiff:
    turn: int
    differs: Differs
    at: int | None = None
    """The first position (in the sampled ids, or the prompt's) where they part; None when unaligned."""

    def __str__(self) -> str:
        where = f" at token {self.at}" if self.at is not None else ""
        return f"turn {self.turn}: {self.differs.value} differs{where}"


def trained_spans(mask: Sequence[int]) -> list[tuple[int, int]]:
    """(start, end) of each run of trained tokens, in order."""
    spans: list[tuple[int, int]] = []
    start = None
    for i, bit in enumerate([*mask, 0]):
        if bit and start is None:
            start = i
        elif not bit and start is not None:
            spans.append((start, i))
            start = None
    return spans


def compare_sampled(input_ids: Sequence[int], mask: Sequence[int], turns: Sequence[Turn]) -> list[TurnDiff] | None:
    """Every recorded turn the render does not reproduce; None when no turn recorded its tokens."""
    recorded = [(k, t.sampled) for k, t in enumerate(turns) if t.sampled is not None]
    if not recorded:
        return None
    spans = trained_spans(mask)
    if len(spans) != len(turns):
        return [TurnDiff(k, Differs.unaligned) for k, _ in recorded]
    ids = list(input_ids)
    diffs: list[TurnDiff] = []
    for k, sampled in recorded:
        start, end = spans[k]
        span, got = ids[start:end], sampled.completion_token_ids
        if got != span and got != span[:-1]:
            diffs.append(TurnDiff(k, Differs.completion, _parting(got, span)))
        prompt = sampled.prompt_token_ids
        if prompt is not None and prompt != ids[:start]:
            diffs.append(TurnDiff(k, Differs.prompt, _parting(prompt, ids[:start])))
    return diffs


def _parting(a: Sequence[int], b: Sequence[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def describe(diffs: Sequence[TurnDiff], shown: int = 3) -> str:
    more = len(diffs) - shown
    return "; ".join(str(d) for d in diffs[:shown]) + (f" (and {more} more)" if more > 0 else "")
