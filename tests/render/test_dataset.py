"""The `tokenized` config: columns TRL reads, labels that follow the mask, statistics that add up."""

from __future__ import annotations

import pytest

from factory.records import Exit, Trajectory
from factory.render import RenderStats, build_renderer, tokenized_dataset
from tests.render.render_cases import BASH, CASES, asst, call, user


def _traj(name: str, messages, tools) -> Trajectory:
    return Trajectory(instance_id=name, teacher="t", model="m", messages=messages, tools=tools, exit=Exit.submitted)


@pytest.fixture(scope="module")
def built():
    bad = [user("go"), asst("", None, [call("c", "bash", "{oops")])]
    trajs = [_traj(n, *CASES[n]) for n in CASES] + [_traj("bad", bad, [BASH])]
    return tokenized_dataset(trajs, build_renderer(template="qwen3"))


def test_rows_carry_ids_masks_and_labels(built) -> None:
    ds, _ = built
    assert ds.column_names[:3] == ["input_ids", "assistant_masks", "labels"]
    for row in ds:
        assert len(row["input_ids"]) == len(row["assistant_masks"]) == len(row["labels"]) == row["num_tokens"]
        for tok, bit, label in zip(row["input_ids"], row["assistant_masks"], row["labels"], strict=True):
            assert label == (tok if bit else -100)
        assert row["num_assistant_tokens"] == sum(row["assistant_masks"])


def test_a_row_that_cannot_render_is_dropped_and_counted(built) -> None:
    ds, stats = built
    assert "bad" not in ds["instance_id"]
    assert sorted(ds["instance_id"]) == sorted(CASES)
    assert stats.dropped == {"bad_arguments": 1}


def test_dataset_statistics_add_up(built) -> None:
    ds, stats = built
    assert stats.rows == len(ds)
    assert stats.tokens == sum(ds["num_tokens"])
    assert stats.assistant_tokens == sum(ds["num_assistant_tokens"])
    assert stats.tool_tokens == sum(ds["num_tool_tokens"])
    assert 0 < stats.assistant_share < 1 and 0 < stats.tool_share < 1
    assert stats.as_dict()["assistant_share"] == round(stats.assistant_tokens / stats.tokens, 4)
    halves = RenderStats(1, 10, 2, 3) + RenderStats(2, 30, 6, 9)
    assert (halves.rows, halves.tokens, halves.assistant_share, halves.tool_share) == (3, 40, 0.2, 0.3)


def test_rows_match_the_renderer(built) -> None:
    ds, _ = built
    renderer = build_renderer(template="qwen3")
    row = ds[[*ds["instance_id"]].index("tools")]
    assert row["input_ids"] == renderer.render(*CASES["tools"]).input_ids
