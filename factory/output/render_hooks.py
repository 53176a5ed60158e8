"""Adapts a renderer (`factory.render.build_renderer(...)`) to what `build_dataset` takes.

    hooks = render_hooks(build_renderer(template="qwen3"))
    build_dataset(..., count_tokens=hooks.count_tokens, tokenize=hooks.tokenize, render_info=hooks.info)

Duck-typed on the renderer (`render`, `render_batch`, `card`), so output does not import the
renderer's internals. A kept row whose turns recorded the ids their server sampled is compared
with its render (`factory.render.sampled`, pure and light); each that differs gets a
`sampled_tokens_differ` flag in the `render` step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from factory.filters import RENDER_STEP, Drop, DropReason, Flag, FlagCode, TokenCounter, TokenCounts
from factory.output.card import RenderInfo
from factory.output.rows import TokenizedRow
from factory.records import Attempt, Message, Trajectory
from factory.render.sampled import compare_sampled, describe

STEP = RENDER_STEP


class RendererLike(Protocol):
    def render(self, messages: list[Message], tools: list[dict[str, Any]]) -> Any: ...
    def render_batch(self, conversations: Sequence[tuple[list[Message], list[dict[str, Any]]]]) -> list[Any]: ...
    def card(self) -> dict[str, str]: ...


@dataclass
class RenderHooks:
    count_tokens: TokenCounter
    info: RenderInfo
    renderer: RendererLike

    def tokenize(self, kept: list[Attempt]) -> list[TokenizedRow | Drop | Flag]:
        conversations = []
        for attempt in kept:
            assert attempt.trajectory is not None
            conversations.append((attempt.trajectory.messages, attempt.trajectory.tools))
        out: list[TokenizedRow | Drop | Flag] = []
        for attempt, rendered in zip(kept, self.renderer.render_batch(conversations), strict=True):
            if isinstance(rendered, Exception):
                reason = getattr(rendered, "reason", type(rendered).__name__)
                out.append(Drop(attempt.key, STEP, DropReason.render_failed, f"{reason}: {rendered}"))
            else:
                out.append(TokenizedRow(attempt.key, rendered.input_ids, rendered.assistant_masks,
                                        getattr(rendered, "labels", None)))
                diffs = compare_sampled(rendered.input_ids, rendered.assistant_masks, attempt.trajectory.turns)
                if diffs:
                    out.append(Flag(attempt.key, STEP, FlagCode.sampled_tokens_differ, describe(diffs)))
        return out


def render_hooks(renderer: RendererLike, *, template_sha256: str = "") -> RenderHooks:
    """Hooks for `build_dataset`; `template_sha256` fills in what the renderer's card lacks."""
    card = renderer.card()

    def count_tokens(trajectory: Trajectory) -> TokenCounts:
        rendered = renderer.render(trajectory.messages, trajectory.tools)
        return TokenCounts.from_mask(list(rendered.assistant_masks))

    info = RenderInfo(
        template=card.get("template", "?"),
        template_sha256=card.get("template_sha256", template_sha256),
        tokenizer=card.get("tokenizer", "?"),
        tokenizer_sha256=card.get("tokenizer_sha256", ""),
        notes=f"Reasoning kept: `{card['thinking']}`." if card.get("thinking") else "",
        thinking=card.get("thinking", ""),
    )
    return RenderHooks(count_tokens=count_tokens, info=info, renderer=renderer)
