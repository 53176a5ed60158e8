"""The writer: schema, idempotent attempts, filter decisions, buffering, and a reader in the way."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from factory.errors import UsageError
from factory.filters.base import Drop, DropReason
from factory.records import Attempt
from factory.warehouse import STORAGE_VERSION, Warehouse, WarehouseBusy, run_query
from tests.warehouse.sample import F2P, P2P, T0, attempt, key, task

TABLES = {"meta", "runs", "tasks", "attempts", "turns", "test_results", "drops", "tool_calls"}


def count(db: Path, sql: str) -> int:
    return run_query(db, sql).rows[0][0]


def test_schema_is_created_in_a_format_older_clients_open(tmp_path):
    db = tmp_path / "runs" / "r1" / "warehouse.duckdb"
    Warehouse(db).close()
    tables = {r[0] for r in run_query(db, "SELECT table_name FROM information_schema.tables").rows}
    assert TABLES | {"v_attempts", "v_task_pass", "filter_steps"} <= tables
    assert run_query(db, "SELECT value FROM meta WHERE key = 'schema_version'").rows == [("1",)]
    tags = run_query(db, "SELECT tags FROM duckdb_databases() WHERE database_name = current_database()").rows
    assert tags[0][0]["storage_version"].startswith(STORAGE_VERSION)
    Warehouse(db).close()  # opening an existing warehouse again keeps it as it is


def test_an_attempt_written_twice_is_one_row_with_its_turns_and_tests_once(tmp_path):
    db = tmp_path / "w.duckdb"
    wh = Warehouse(db)
    a = attempt("r1", "mid", "A", 0, "pass")
    wh.record_attempt(a, started_at=T0, finished_at=T0)
    wh.record_attempt(a, started_at=T0, finished_at=T0)  # same buffer
    wh.flush()
    wh.record_attempt(a, started_at=T0, finished_at=T0)  # a later flush (a resumed run)
    wh.close()
    assert count(db, "SELECT count(*) FROM attempts") == 1
    assert count(db, "SELECT count(*) FROM turns") == 2
    assert count(db, "SELECT count(*) FROM test_results") == 2


def test_a_rewritten_attempt_replaces_its_rows(tmp_path):
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        wh.record_attempt(attempt("r1", "mid", "A", 0, "fail"), started_at=T0, finished_at=T0, kept=False)
        wh.flush()
        changed = attempt("r1", "mid", "A", 0, "pass")
        assert changed.trajectory is not None
        changed.trajectory.turns = changed.trajectory.turns[:1]
        wh.record_attempt(changed, started_at=T0, finished_at=T0)
    assert run_query(db, "SELECT resolved, n_turns, kept FROM attempts").rows == [(True, 2, False)]
    assert count(db, "SELECT count(*) FROM turns") == 2  # one usage row plus the second assistant message
    assert run_query(db, "SELECT status FROM test_results WHERE test_id = ?", [F2P]).rows == [("passed",)]


def test_the_attempt_row_carries_usage_cost_timings_and_tokens_by_role(tmp_path):
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        wh.record_attempt(attempt("r1", "mid", "A", 3, "pass", cost=0.04), started_at=T0, finished_at=T0)
    row = run_query(db, "SELECT * FROM attempts").dicts()[0]
    assert (row["teacher"], row["attempt_index"], row["model"], row["exit"], row["scripted"]) == ("A", 3, "A-model", "submitted", False)
    assert (row["input_tokens"], row["output_tokens"], row["n_turns"]) == (200, 20, 2)
    assert row["cost_usd"] == pytest.approx(0.04)
    assert (row["wall_seconds"], row["verify_seconds"], row["patch_files"]) == (10.0, 3.0, 1)
    # characters / 4, rounded up: system 40, user 80, assistant 20 + "bash" + '{"command": "ls"}' and 12, tool 400
    assert (row["system_tokens_est"], row["user_tokens_est"], row["assistant_tokens_est"], row["tool_tokens_est"]) == (10, 20, 11 + 3, 100)
    assert row["started_at"] == T0.replace(tzinfo=None)
    turns = run_query(db, "SELECT turn_index, retries, seconds, assistant_tokens_est, tool_tokens_est FROM turns ORDER BY 1").rows
    assert turns == [(0, 0, 1.5, 11, 100), (1, 1, 1.5, 3, 0)]


def test_an_attempt_without_trajectory_or_price_is_still_a_row(tmp_path):
    db = tmp_path / "w.duckdb"
    bare = Attempt(key=key("r1", "hard", "B", 0), repo="acme/widgets", error_class="SandboxStartError")
    with Warehouse(db) as wh:
        wh.record_attempt(bare, started_at=T0, finished_at=T0)
        wh.record_attempt(attempt("r1", "hard", "B", 1, "crash", cost=None), started_at=T0, finished_at=T0)
    rows = run_query(db, "SELECT attempt_index, exit, error_class, n_turns, cost_usd, resolved FROM attempts ORDER BY 1").rows
    assert rows == [(0, None, "SandboxStartError", 0, None, None), (1, "sandbox_error", "SandboxCrashed", 2, None, None)]


def test_test_results_know_fail_to_pass_from_pass_to_pass_even_when_the_task_comes_later(tmp_path):
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        wh.record_attempt(attempt("r1", "mid", "A", 0, "pass"), started_at=T0, finished_at=T0)
        wh.flush()
        assert count(db, "SELECT count(*) FROM test_results WHERE kind IS NULL") == 2
        wh.record_tasks("r1", [task("mid")])
        wh.record_attempt(attempt("r1", "mid", "A", 1, "fail"), started_at=T0, finished_at=T0)
    kinds = run_query(db, "SELECT attempt_index, test_id, status, kind FROM test_results ORDER BY 1, 2").rows
    assert kinds == [(0, F2P, "passed", "F2P"), (0, P2P, "passed", "P2P"), (1, F2P, "failed", "F2P"), (1, P2P, "passed", "P2P")]


def record_three(wh: Warehouse) -> None:
    for index in range(3):
        wh.record_attempt(attempt("r1", "mid", "A", index, "pass"), started_at=T0, finished_at=T0)


def test_a_filter_pass_replaces_the_runs_earlier_decisions_and_keeps_the_rest(tmp_path):
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        record_three(wh)
        wh.record_drops("r1", [Drop(key("r1", "mid", "A", 1), "dedup", DropReason.duplicate_patch).to_row()])
        wh.flush()
        assert run_query(db, "SELECT attempt_index, kept FROM attempts ORDER BY 1").rows == [(0, True), (1, False), (2, True)]
        wh.record_drops("r1", [Drop(key("r1", "mid", "A", 2), "cap", DropReason.over_cap, "3 > 2").to_row()])
        wh.record_attempt(attempt("r1", "mid", "A", 3, "pass"), started_at=T0, finished_at=T0)  # after the pass
        wh.record_attempt(attempt("r1", "mid", "A", 0, "pass"), started_at=T0, finished_at=T0)  # kept stays
    rows = run_query(db, "SELECT attempt_index, kept, dropped_by, drop_reason, decided FROM v_attempts ORDER BY 1").rows
    assert rows == [(0, True, None, None, True), (1, True, None, None, True), (2, False, "cap", "over_cap", True),
                    (3, None, None, None, False)]
    assert run_query(db, "SELECT filter, reason, detail FROM drops").rows == [("cap", "over_cap", "3 > 2")]


def test_decisions_for_named_attempts_leave_the_others_alone(tmp_path):
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        record_three(wh)
        wh.record_drops("r1", [Drop(key("r1", "mid", "A", 0), "loops", DropReason.action_cycle).to_row()],
                        kept=[key("r1", "mid", "A", 1)])
    assert run_query(db, "SELECT attempt_index, kept FROM attempts ORDER BY 1").rows == [(0, False), (1, True), (2, None)]
    with pytest.raises(ValueError, match="recorded under run"):
        Warehouse(db).record_drops("r2", [Drop(key("r1", "mid", "A", 0), "loops", DropReason.action_cycle).to_row()])


def test_records_reach_the_file_without_an_explicit_flush(tmp_path):
    db = tmp_path / "w.duckdb"
    wh = Warehouse(db, flush_seconds=0.05)
    wh.start_run("r1", "demo", "name: demo\n", "factory run demo.yaml")
    record_three(wh)
    deadline = time.monotonic() + 30  # a guard against a hang, not a speed assertion
    while count(db, "SELECT count(*) FROM attempts") < 3:
        assert time.monotonic() < deadline, "the timer never flushed"
        time.sleep(0.02)
    assert run_query(db, "SELECT pipeline_name, command FROM runs").rows == [("demo", "factory run demo.yaml")]
    wh.close()
    with pytest.raises(RuntimeError, match="closed"):
        record_three(wh)


def test_a_reader_holding_the_file_delays_the_writer_but_loses_nothing(tmp_path):
    db = tmp_path / "w.duckdb"
    wh = Warehouse(db, flush_seconds=0.05)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); "
         "print('open', flush=True); sys.stdin.readline()", str(db)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        record_three(wh)
        with pytest.raises(WarehouseBusy, match="held the file lock"):
            wh.flush(timeout=0.2)
        time.sleep(0.2)  # timed flushes meet the lock too, and keep the records
    finally:
        holder.communicate("\n", timeout=30)
    wh.close()
    assert count(db, "SELECT count(*) FROM attempts") == 3
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM turns").fetchone() == (6,)


def test_the_attempt_row_shows_its_first_drop_in_filter_order_even_if_the_drop_came_first(tmp_path):
    db = tmp_path / "w.duckdb"
    drops = [Drop(key("r1", "mid", "A", 0), "cap", DropReason.over_cap).to_row(),
             Drop(key("r1", "mid", "A", 0), "loops", DropReason.action_cycle, "view, edit").to_row()]
    with Warehouse(db) as wh:
        wh.record_drops("r1", drops, kept=[])
        wh.flush()  # the decision is written before the attempt is
        wh.record_attempt(attempt("r1", "mid", "A", 0, "pass"), started_at=T0, finished_at=T0)
    assert run_query(db, "SELECT kept, dropped_by, drop_reason FROM attempts").rows == [(False, "loops", "action_cycle")]
    assert count(db, "SELECT count(*) FROM drops") == 2


def test_a_warehouse_of_another_schema_version_is_refused_in_one_line(tmp_path):
    db = tmp_path / "w.duckdb"
    Warehouse(db).close()
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    with pytest.raises(UsageError, match="warehouse schema 0, this factory writes 1"):
        Warehouse(db)
