"""Turns that recorded exactly the ids a renderer makes of them: what a server serving the
student's own template samples (a test changes some to be a server that does not)."""

from __future__ import annotations

from factory.records import SampledTokens, Trajectory
from factory.render.sampled import trained_spans


def as_sampled(trajectory: Trajectory, renderer, *, prompts: bool = True) -> Trajectory:
    """`trajectory` with each turn's `sampled` set to the renderer's ids of it (and of its prompt)."""
    rendered = renderer.render(trajectory.messages, trajectory.tools)
    ids = list(rendered.input_ids)
    spans = trained_spans(rendered.assistant_masks)
    assert len(spans) == len(trajectory.turns)
    turns = [
        turn.model_copy(update={"sampled": SampledTokens(
            completion_token_ids=ids[start:end], logprobs=[-0.5] * (end - start),
            prompt_token_ids=ids[:start] if prompts else None)})
        for turn, (start, end) in zip(trajectory.turns, spans, strict=True)
    ]
    return trajectory.model_copy(update={"turns": turns})
