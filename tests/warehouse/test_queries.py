"""Every named query on the hand-built warehouse of `sample.py`, against answers worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory.filters import FILTER_ORDER, RENDER_STEP
from factory.warehouse import Warehouse, named_queries, run_query
from factory.warehouse.read import only_run
from tests.warehouse import sample

ROOT = Path(__file__).parents[2]
NAMES = ["cost_per_kept", "exit_reasons", "funnel", "learnable_tasks", "loop_rate", "mixed_groups",
         "pass_rate_by_language", "pass_rate_by_task", "pass_rate_by_teacher", "reward_spread"]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    return sample.build(tmp_path_factory.mktemp("wh") / "warehouse.duckdb")


def named(db: Path, name: str, run: str | None = None) -> list[dict]:
    sql, params = named_queries()[name].read_text(), []
    if run is not None:
        sql, params = only_run(sql, run)
    return run_query(db, sql, params).dicts()


def test_the_named_queries_are_the_ones_the_issue_asks_for():
    assert list(named_queries()) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_each_query_explains_itself_and_has_a_run_id_column(db, name):
    text = named_queries()[name].read_text()
    assert text.startswith(f"-- {name}: ")
    rows = named(db, name)
    assert rows and all("run_id" in row for row in rows)
    assert {row["run_id"] for row in named(db, name, run="r2")} <= {"r2"}


def test_funnel(db):
    r1 = [(row["stage"], row["remaining"], row["dropped"]) for row in named(db, "funnel", run="r1")]
    assert r1 == [
        ("attempts", 12, None),  # one stage a meaning: the 6 unresolved are dropped once, by `resolved`
        ("resolved", 6, 6), ("loops", 5, 1), ("length", 5, 0), ("dedup", 4, 1),
        ("cap", 4, 0), ("secrets", 4, 0), ("render", 4, 0), ("kept", 4, None),
    ]
    assert named(db, "funnel", run="r1")[-1]["pct"] == pytest.approx(33.3)
    # r2 has no filter decisions yet: the filter stages start from zero decided attempts
    r2 = {row["stage"]: row["remaining"] for row in named(db, "funnel", run="r2")}
    assert (r2["attempts"], r2["resolved"], r2["loops"], r2["kept"]) == (2, 0, 0, 0)


def test_funnel_follows_the_filter_order(db):
    rows = run_query(db, "SELECT filter FROM filter_steps ORDER BY step").rows
    assert tuple(r[0] for r in rows) == (*FILTER_ORDER, RENDER_STEP)


def test_pass_rate_by_task(db):
    rows = named(db, "pass_rate_by_task", run="r1")
    got = [(r["instance_id"], r["attempts"], r["graded"], r["infra_errors"], r["passed"], r["kept"], r["band"])
           for r in rows]
    assert got == [
        ("hard", 3, 2, 1, 0, 0, "too_hard"),
        ("mid2", 3, 3, 0, 1, 1, "learnable"),
        ("mid", 4, 4, 0, 3, 2, "learnable"),
        ("easy", 2, 2, 0, 2, 1, "too_easy"),
        ("spare", 0, 0, 0, 0, 0, "not_attempted"),
    ]
    assert [r["pass_rate"] for r in rows[:4]] == pytest.approx([0, 1 / 3, 0.75, 1])
    assert rows[4]["pass_rate"] is None


def test_learnable_tasks(db):
    rows = named(db, "learnable_tasks")
    assert [(r["run_id"], r["instance_id"], r["graded"], r["passed"]) for r in rows] == [
        ("r1", "mid2", 3, 1), ("r1", "mid", 4, 3), ("r2", "solo", 2, 1)]
    for row, p in zip(rows, (1 / 3, 0.75, 0.5), strict=True):
        assert row["pass_rate"] == pytest.approx(p)
        assert row["p_mixed_8"] == pytest.approx(1 - p**8 - (1 - p) ** 8)
        assert row["p_mixed_64"] == pytest.approx(1 - p**64 - (1 - p) ** 64)
    assert rows[1]["p_mixed_8"] == pytest.approx(0.8998718262)
    assert (rows[0]["source"], rows[0]["image"]) == ("local:demo", "img/mid2")
    assert [r["language"] for r in rows] == ["go", "python", "rust"]


def test_pass_rate_by_language(db):
    rows = named(db, "pass_rate_by_language")
    got = [(r["run_id"], r["language"], r["attempts"], r["graded"], r["passed"], r["tasks"], r["tasks_solved"],
            r["kept"]) for r in rows]
    # python: easy 2 + hard 3 (one crash, not graded) + mid 4; kept easy A#0, mid A#0 and B#0
    assert got == [("r1", "go", 3, 3, 1, 1, 1, 1), ("r1", "python", 9, 8, 5, 3, 2, 3), ("r2", "rust", 2, 2, 1, 1, 1, 0)]
    assert [r["pass_rate"] for r in rows] == pytest.approx([1 / 3, 5 / 8, 1 / 2])


def test_v_attempts_carries_the_tasks_language_and_null_before_the_task_is_recorded(db, tmp_path):
    rows = run_query(db, "SELECT DISTINCT instance_id, language FROM v_attempts ORDER BY instance_id").rows
    assert rows == [("easy", "python"), ("hard", "python"), ("mid", "python"), ("mid2", "go"), ("solo", "rust")]
    with Warehouse(tmp_path / "w.duckdb") as wh:
        wh.start_run("r", "p", "", "")
        wh.record_attempt(sample.attempt("r", "t", "A", 0, "pass"), started_at=sample.T0, finished_at=sample.T0)
    [row] = named(tmp_path / "w.duckdb", "pass_rate_by_language")
    assert (row["language"], row["attempts"]) == ("(unknown)", 1)


def test_pass_rate_by_teacher(db):
    rows = named(db, "pass_rate_by_teacher", run="r1")
    got = [(r["teacher"], r["model"], r["attempts"], r["graded"], r["passed"], r["tasks"], r["tasks_solved"], r["kept"])
           for r in rows]
    assert got == [("B", "B-model", 6, 5, 3, 3, 2, 2), ("A", "A-model", 6, 6, 3, 3, 2, 2)]
    assert [r["pass_rate"] for r in rows] == pytest.approx([0.6, 0.5])
    assert rows[1]["cost_usd"] == pytest.approx(0.12)


def test_cost_per_kept(db):
    rows = {r["teacher"]: r for r in named(db, "cost_per_kept", run="r1")}
    assert list(rows) == ["A", "B", "(all)"]
    a, b, total = rows["A"], rows["B"], rows["(all)"]
    assert (a["attempts"], a["kept"], a["unpriced"]) == (6, 2, 0)
    assert a["cost_usd"] == pytest.approx(0.12) and a["cost_per_kept"] == pytest.approx(0.06)
    assert a["tokens_per_kept"] == pytest.approx(6 * 220 / 2)
    assert a["agent_seconds_per_kept"] == pytest.approx(6 * 10 / 2)
    assert (b["unpriced"], b["cost_per_kept"]) == (1, None)  # a partial sum would understate it
    assert b["cost_usd"] == pytest.approx(0.05)
    assert (total["attempts"], total["kept"], total["unpriced"], total["cost_per_kept"]) == (12, 4, 1, None)
    assert total["cost_usd"] == pytest.approx(0.17)


def test_exit_reasons(db):
    rows = [(r["teacher"], r["exit"], r["outcome"], r["attempts"]) for r in named(db, "exit_reasons", run="r1")]
    assert rows == [
        ("A", "submitted", "resolved", 3),
        ("A", "submitted", "unresolved:tests_failed", 2),
        ("A", "max_turns", "unverified:max_turns", 1),
        ("B", "submitted", "resolved", 3),
        ("B", "submitted", "unresolved:tests_failed", 2),
        ("B", "sandbox_error", "error:SandboxCrashed", 1),
    ]
    shares = [r["share"] for r in named(db, "exit_reasons", run="r1")]
    assert shares == pytest.approx([1 / 2, 1 / 3, 1 / 6] * 2)


def test_loop_rate(db):
    rows = named(db, "loop_rate", run="r1")
    got = [(r["teacher"], r["attempts"], r["checked"], r["looped"], r["repeated_action"], r["action_cycle"])
           for r in rows]
    assert got == [("B", 6, 3, 1, 1, 0), ("A", 6, 3, 0, 0, 0)]
    assert [r["loop_rate"] for r in rows] == pytest.approx([1 / 3, 0])
    assert [r["max_turns_rate"] for r in rows] == pytest.approx([0, 1 / 6])


def test_top_level_warehouse_folder_points_at_the_package_sql():
    top = ROOT / "warehouse"
    assert (top / "schema.sql").read_text() == (ROOT / "factory/warehouse/sql/schema.sql").read_text()
    assert sorted(p.stem for p in (top / "queries").glob("*.sql")) == NAMES
    for name, path in named_queries().items():
        assert (top / "queries" / f"{name}.sql").read_text() == path.read_text(), name


def test_reward_spread_follows_each_group_in_the_order_its_attempts_finished(db):
    rows = named(db, "reward_spread", run="r1")
    mid2 = [(r["nth"], r["reward"], r["mean_reward"], round(r["reward_std"], 4), r["mixed"])
            for r in rows if (r["instance_id"], r["teacher"]) == ("mid2", "B")]
    assert mid2 == [(1, 1.0, 1.0, 0.0, False), (2, 0.0, 0.5, 0.5, True), (3, 0.0, 1 / 3, 0.4714, True)]
    assert not [r for r in rows if (r["instance_id"], r["teacher"]) == ("hard", "B")]  # an infra failure is no rollout
    hard = [(r["reward"], r["f2p_passed"]) for r in rows if (r["instance_id"], r["teacher"]) == ("hard", "A")]
    assert hard == [(0.0, 0.0), (0.0, 0.0)]  # failed, and never verified: both 0


def test_mixed_groups_counts_the_groups_grpo_can_learn_from(db):
    rows = {r["teacher"]: r for r in named(db, "mixed_groups", run="r1")}
    assert list(rows) == ["(all)", "A", "B"]
    # A: easy (all passed), hard (all failed), mid (mixed); B: mid (all passed), mid2 (mixed)
    assert [(r["groups"], r["mixed"], r["all_passed"], r["all_failed"]) for r in rows.values()] == [
        (5, 2, 2, 1), (3, 1, 1, 1), (2, 1, 1, 0)]
    assert rows["(all)"]["share_mixed"] == pytest.approx(0.4)
    assert rows["B"]["mean_reward_std"] == pytest.approx((0 + (2 / 9) ** 0.5) / 2)
