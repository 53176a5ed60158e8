"""`factory export --format rollouts`: one record per graded attempt with its group, reward and the
token ids its turns recorded, each turn checked against the run's renderer."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from factory.interchange import export_dataset
from factory.records import TestStatus
from factory.render import build_renderer
from factory.warehouse import Warehouse, run_query
from tests.output.sample_run import RUN_ID, TASKS, demo_attempts, run_folder
from tests.render.sampled_ids import as_sampled
from tests.warehouse.sample import T0


@pytest.fixture(scope="module")
def qwen3():
    return build_renderer(template="qwen3")


def recorded_run(tmp_path, qwen3):
    """The sample run, its tasks in its warehouse; claude's turns recorded the ids the render makes
    (attempt 1's turn 0 one id off), and widgets-1 claude#0 passed its FAIL_TO_PASS test."""
    attempts = demo_attempts()
    for a in attempts:
        if a.trajectory is not None and a.key.teacher == "claude":
            a.trajectory = as_sampled(a.trajectory, qwen3)
    off = next(a for a in attempts if (a.key.teacher, a.key.index) == ("claude", 1)).trajectory.turns[0].sampled
    off.completion_token_ids[1] += 1
    w1 = attempts[0]
    w1.verdict.tests = {TASKS[w1.key.instance_id].FAIL_TO_PASS[0]: TestStatus.passed}
    store = run_folder(tmp_path, attempts=attempts)
    with Warehouse(store.warehouse_path) as wh:
        wh.record_tasks(RUN_ID, list(TASKS.values()))
        for a in attempts:
            wh.record_attempt(a, started_at=T0, finished_at=T0)
    return store, attempts


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_one_rollout_per_graded_attempt_with_its_group_reward_and_versions(tmp_path, qwen3):
    store, attempts = recorded_run(tmp_path, qwen3)
    summary = export_dataset(store.dataset_dir, "rollouts", tmp_path / "rollouts.jsonl")
    out = records(tmp_path / "rollouts.jsonl")

    assert summary.written == len(out) == len(attempts) - 1 and summary.infra == 1  # the outage is no rollout
    first = out[0]
    assert (first["group_id"], first["repetition"], first["reward"], first["f2p_passed"]) == (
        "acme__widgets-1/claude", 0, 1.0, 1.0)
    assert (first["stop_reason"], first["model"], first["harness"]) == ("submitted", "claude-sonnet-4-5", "factory")
    assert first["factory_version"] and first["messages"][0]["role"] == "system"
    failed = next(r for r in out if (r["group_id"], r["repetition"]) == ("acme__widgets-2/claude", 0))
    assert (failed["reward"], failed["resolved"], failed["f2p_passed"]) == (0.0, False, 0.0)
    # the warehouse gives the same rewards
    wh = {(i, t, n): (r, f) for i, t, n, r, f in run_query(
        store.warehouse_path, "SELECT instance_id, teacher, attempt_index, reward, f2p_passed FROM v_rewards").rows}
    assert {(r["instance_id"], r["teacher"], r["repetition"]): (r["reward"], r["f2p_passed"]) for r in out} == wh


def test_recorded_ids_are_carried_and_a_turn_the_render_does_not_reproduce_is_flagged(tmp_path, qwen3):
    store, attempts = recorded_run(tmp_path, qwen3)
    summary = export_dataset(store.dataset_dir, "rollouts", tmp_path / "rollouts.jsonl")
    out = {(r["group_id"], r["repetition"]): r for r in records(tmp_path / "rollouts.jsonl")}

    same = out["acme__widgets-1/claude", 0]
    sampled = attempts[0].trajectory.turns[0].sampled
    assert same["turns"][0]["completion_token_ids"] == sampled.completion_token_ids
    assert same["turns"][0]["prompt_token_ids"] == sampled.prompt_token_ids
    assert same["turns"][0]["logprobs"] == sampled.logprobs
    assert {t["render_matches"] for t in same["turns"]} == {True} and same["token_mismatches"] == 0
    off = out["acme__widgets-1/claude", 1]
    assert [t["render_matches"] for t in off["turns"]][:2] == [False, True] and off["token_mismatches"] == 1
    gpt = out["acme__widgets-1/gpt", 0]
    assert {t["completion_token_ids"] is None and t["render_matches"] is None for t in gpt["turns"]} == {True}
    assert summary.mismatched == 1 and summary.with_ids == sum(1 for a in attempts
                                                               if a.key.teacher == "claude" and a.trajectory)


def test_parquet_holds_the_same_records(tmp_path, qwen3):
    store, _ = recorded_run(tmp_path, qwen3)
    export_dataset(store.dataset_dir, "rollouts", tmp_path / "r.jsonl")
    export_dataset(store.dataset_dir, "rollouts", tmp_path / "r.parquet")
    assert pq.read_table(tmp_path / "r.parquet").to_pylist() == records(tmp_path / "r.jsonl")
