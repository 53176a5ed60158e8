"""The renderer's ids of a recorded turn against the ids its server sampled: every difference told."""

from __future__ import annotations

import pytest

from factory.records import Exit, SampledTokens, Trajectory, Turn
from factory.render import build_renderer
from factory.render.sampled import Differs, TurnDiff, compare_sampled, trained_spans
from tests.render.render_cases import BASH, asst, call, sys, tool, user
from tests.render.sampled_ids import as_sampled


@pytest.fixture(scope="module")
def qwen3():
    return build_renderer(template="qwen3")


def recorded(qwen3) -> Trajectory:
    messages = [sys("You fix bugs."), user("fix it"),
                asst("Looking.", "where is it?", [call("c1", "bash", '{"cmd": "ls"}')]),
                tool("c1", "a.py"), asst("Done.", "fixed")]
    plain = Trajectory(instance_id="t", teacher="v", model="m", messages=messages, tools=[BASH],
                       exit=Exit.submitted, turns=[Turn(), Turn()])
    return as_sampled(plain, qwen3)


def check(qwen3, trajectory: Trajectory) -> list[TurnDiff] | None:
    rendered = qwen3.render(trajectory.messages, trajectory.tools)
    return compare_sampled(rendered.input_ids, rendered.assistant_masks, trajectory.turns)


def with_turn(trajectory: Trajectory, k: int, **changes) -> Trajectory:
    turns = list(trajectory.turns)
    turns[k] = turns[k].model_copy(update={"sampled": turns[k].sampled.model_copy(update=changes)})
    return trajectory.model_copy(update={"turns": turns})


def test_the_ids_the_template_makes_match(qwen3):
    assert check(qwen3, recorded(qwen3)) == []


def test_a_server_that_leaves_out_the_end_of_turn_token_still_matches(qwen3):
    t = recorded(qwen3)
    ids = t.turns[1].sampled.completion_token_ids
    assert qwen3.decode(ids[-1:]) == "<|im_end|>"
    assert check(qwen3, with_turn(t, 1, completion_token_ids=ids[:-1])) == []


def test_a_sampled_id_the_render_does_not_make_is_flagged_where_it_parts(qwen3):
    t = recorded(qwen3)
    ids = list(t.turns[0].sampled.completion_token_ids)
    ids[3] += 1
    assert check(qwen3, with_turn(t, 0, completion_token_ids=ids)) == [TurnDiff(0, Differs.completion, 3)]


def test_the_same_text_split_into_other_tokens_is_flagged(qwen3):
    """What re-tokenization does: the text decodes the same, the ids the trainer scores differ."""
    t = recorded(qwen3)
    ids = t.turns[1].sampled.completion_token_ids
    text = qwen3.decode(ids[:-1])
    split = [i for ch in text for i in qwen3.encoder.encode_texts([ch])[0]]  # one character at a time
    assert qwen3.decode(split) == text and split != ids[:-1]
    [diff] = check(qwen3, with_turn(t, 1, completion_token_ids=[*split, ids[-1]]))
    assert diff.turn == 1 and diff.differs is Differs.completion


def test_a_prompt_the_server_rendered_otherwise_is_flagged(qwen3):
    """The server saw the history without the first turn's reasoning; the row trains with it."""
    t = recorded(qwen3)
    history = [m.model_copy(update={"reasoning": None}) for m in t.messages[:4]]
    served = qwen3.render([*history, asst("Done.", "fixed")], t.tools)
    start, _ = trained_spans(served.assistant_masks)[1]
    prompt = list(served.input_ids[:start])  # ... <|im_start|> assistant \n
    [diff] = check(qwen3, with_turn(t, 1, prompt_token_ids=prompt))
    assert diff.turn == 1 and diff.differs is Differs.prompt


def test_a_trajectory_with_more_turns_than_the_render_has_spans_is_unaligned(qwen3):
    t = recorded(qwen3)
    extra = Turn(sampled=SampledTokens(completion_token_ids=[1]))
    t = t.model_copy(update={"turns": [*t.turns, extra]})
    assert {d.differs for d in check(qwen3, t)} == {Differs.unaligned}


def test_turns_that_recorded_nothing_are_not_compared(qwen3):
    t = recorded(qwen3).model_copy(update={"turns": [Turn(), Turn()]})
    assert check(qwen3, t) is None
