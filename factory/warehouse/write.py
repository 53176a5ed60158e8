"""The flush transaction: one buffered batch of records written in one DuckDB transaction.

Everything is keyed, so writing a batch again changes nothing: runs and attempts are upserted,
an attempt's turns and test results are deleted and inserted again, tasks replaced. Rows go in
through Arrow (`register` + `INSERT ... SELECT`), a statement per table rather than a row loop,
which keeps the file lock short. Filter decisions are denormalized onto the attempt row
(`kept`, `dropped_by`, `drop_reason`: its first drop in filter order) so that queries need no
join; the `drops` table keeps every decision with its detail.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from factory.warehouse import rows as R

_ON = " AND ".join(f"{{t}}.{c} = {{b}}.{c}" for c in R.KEY_COLUMNS)
_KIND = """CASE WHEN list_contains(t.fail_to_pass, {r}.test_id) THEN 'F2P'
                WHEN list_contains(t.pass_to_pass, {r}.test_id) THEN 'P2P'
                WHEN t.instance_id IS NOT NULL THEN 'other' END"""
_FIRST_DROPS = """SELECT d.run_id, d.instance_id, d.teacher, d.attempt_index,
           arg_min(d.filter, coalesce(s.step, 99)) AS filter, arg_min(d.reason, coalesce(s.step, 99)) AS reason
    FROM drops d LEFT JOIN filter_steps s ON s.filter = d.filter
    WHERE {where}
    GROUP BY d.run_id, d.instance_id, d.teacher, d.attempt_index"""


def on(t: str, b: str = "b") -> str:
    return _ON.format(t=t, b=b)


@dataclass
class RunDecision:
    """A whole filter pass of a run: its drops; every other attempt recorded before it is kept."""

    drops: list[R.Row]
    later: set[R.KeyTuple] = field(default_factory=set)
    """Attempts recorded after the pass (in the same batch): not decided by it."""


@dataclass
class Batch:
    runs: dict[str, R.Row] = field(default_factory=dict)
    tasks: dict[tuple[str, str], R.Row] = field(default_factory=dict)
    attempts: dict[R.KeyTuple, tuple[R.Row, list[R.Row], list[R.Row], list[R.Row]]] = field(default_factory=dict)
    """Per attempt: its row, turns, test results and tool calls."""
    run_decisions: dict[str, RunDecision] = field(default_factory=dict)
    decisions: dict[R.KeyTuple, tuple[bool, list[R.Row]]] = field(default_factory=dict)
    task_decisions: dict[str, list[R.Row]] = field(default_factory=dict)
    """A run's allocation decisions, all of them: they replace the run's earlier ones."""
    token_counts: dict[str, list[R.Row]] = field(default_factory=dict)
    """A build's exact token counts of the run's kept rows: they replace the run's earlier ones."""
    builds: dict[str, R.Row] = field(default_factory=dict)
    """A run's latest build settings: they replace the run's earlier ones."""

    def __len__(self) -> int:
        return sum(len(getattr(self, name)) for name in BUCKETS)

    def under(self, newer: Batch) -> Batch:
        """This (older, unwritten) batch with everything `newer` holds written over it."""
        for run_id, decision in self.run_decisions.items():
            decision.later.update(k for k in newer.attempts if k[0] == run_id)
        for name in BUCKETS:
            getattr(self, name).update(getattr(newer, name))
        return self


BUCKETS = ("runs", "tasks", "attempts", "run_decisions", "decisions", "task_decisions", "token_counts", "builds")


def with_rows(con: duckdb.DuckDBPyConnection, rows: list[R.Row], *statements: str, params: list | None = None) -> None:
    """Run `statements` with `rows` visible as the table `b`; nothing to do without rows."""
    if rows:
        con.register("b", pa.Table.from_pylist(rows))
        try:
            for sql in statements:
                con.execute(sql, params or [])
        finally:
            con.unregister("b")


def insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[R.Row], suffix: str = "") -> None:
    columns = ", ".join(rows[0]) if rows else ""
    with_rows(con, rows, f"INSERT INTO {table} ({columns}) SELECT {columns} FROM b {suffix}")


def mark_dropped(where: str) -> str:
    """SQL that copies the first drop of each attempt matched by `where` (over drops `d`) onto its row."""
    return (f"UPDATE attempts SET kept = false, dropped_by = f.filter, drop_reason = f.reason "
            f"FROM ({_FIRST_DROPS.format(where=where)}) f WHERE {on('attempts', 'f')}")


IN_BATCH = f"EXISTS (SELECT 1 FROM b WHERE {on('d')})"


def write_batch(con: duckdb.DuckDBPyConnection, batch: Batch) -> None:
    con.begin()
    try:
        _write_runs_and_tasks(con, batch)
        _write_attempts(con, batch)
        for run_id, decision in batch.run_decisions.items():
            _decide_run(con, run_id, decision)
        _decide_attempts(con, batch.decisions)
        for run_id, rows in batch.task_decisions.items():
            con.execute("DELETE FROM task_decisions WHERE run_id = ?", [run_id])
            insert(con, "task_decisions", rows)
        for run_id, rows in batch.token_counts.items():
            con.execute("UPDATE attempts SET num_tokens = NULL, assistant_tokens = NULL WHERE run_id = ?", [run_id])
            with_rows(con, rows, "UPDATE attempts SET num_tokens = b.num_tokens, assistant_tokens = b.assistant_tokens "
                      f"FROM b WHERE {on('attempts')}")
        insert(con, "builds", list(batch.builds.values()), "ON CONFLICT (run_id) DO UPDATE SET built_at = "
               "excluded.built_at, command = excluded.command, filters_yaml = excluded.filters_yaml")
        con.commit()
    except BaseException:
        with contextlib.suppress(duckdb.Error):  # an I/O error may have ended the transaction: tell that one
            con.rollback()
        raise


def _write_runs_and_tasks(con: duckdb.DuckDBPyConnection, batch: Batch) -> None:
    insert(con, "runs", list(batch.runs.values()), "ON CONFLICT (run_id) DO UPDATE SET pipeline_name = "
           "excluded.pipeline_name, pipeline_yaml = excluded.pipeline_yaml, command = excluded.command, "
           "last_started_at = excluded.last_started_at")
    tasks = list(batch.tasks.values())
    with_rows(con, tasks, "DELETE FROM tasks USING b WHERE tasks.run_id = b.run_id AND tasks.instance_id = b.instance_id")
    insert(con, "tasks", tasks)
    if tasks:  # test results written before their task was: name their kind now
        con.execute(f"UPDATE test_results SET kind = {_KIND.format(r='test_results')} FROM tasks t "
                    "WHERE test_results.kind IS NULL AND t.run_id = test_results.run_id "
                    "AND t.instance_id = test_results.instance_id")


def _write_attempts(con: duckdb.DuckDBPyConnection, batch: Batch) -> None:
    attempts = [row for row, *_ in batch.attempts.values()]
    if not attempts:
        return
    keys = [{c: row[c] for c in R.KEY_COLUMNS} for row in attempts]
    with_rows(con, keys, f"DELETE FROM turns USING b WHERE {on('turns')}",
              f"DELETE FROM test_results USING b WHERE {on('test_results')}",
              f"DELETE FROM tool_calls USING b WHERE {on('tool_calls')}")
    update = ", ".join(f"{c} = excluded.{c}" for c in attempts[0] if c not in R.KEY_COLUMNS and c != "kept")
    insert(con, "attempts", attempts, f"ON CONFLICT ({', '.join(R.KEY_COLUMNS)}) DO UPDATE SET {update}, "
           "kept = coalesce(excluded.kept, attempts.kept)")
    with_rows(con, keys, mark_dropped(IN_BATCH))  # a decision recorded before its attempt was
    insert(con, "turns", [t for _, turns, _, _ in batch.attempts.values() for t in turns])
    insert(con, "tool_calls", [c for *_, calls in batch.attempts.values() for c in calls])
    results = [r for _, _, results, _ in batch.attempts.values() for r in results]
    columns = list(results[0]) if results else []
    with_rows(con, results, (
        f"INSERT INTO test_results ({', '.join(columns)}, kind) SELECT {', '.join('b.' + c for c in columns)}, "
        f"{_KIND.format(r='b')} FROM b LEFT JOIN tasks t ON t.run_id = b.run_id AND t.instance_id = b.instance_id"))


def _decide_run(con: duckdb.DuckDBPyConnection, run_id: str, decision: RunDecision) -> None:
    con.execute("DELETE FROM drops WHERE run_id = ?", [run_id])
    insert(con, "drops", decision.drops)
    reset = "UPDATE attempts SET kept = true, dropped_by = NULL, drop_reason = NULL WHERE run_id = ?"
    later = [dict(zip(R.KEY_COLUMNS, key, strict=True)) for key in decision.later]
    if later:
        with_rows(con, later, f"{reset} AND NOT EXISTS (SELECT 1 FROM b WHERE {on('attempts')})", params=[run_id])
    else:
        con.execute(reset, [run_id])
    con.execute(mark_dropped("d.run_id = ?"), [run_id])


def _decide_attempts(con: duckdb.DuckDBPyConnection, decisions: dict[R.KeyTuple, tuple[bool, list[R.Row]]]) -> None:
    if not decisions:
        return
    rows = [{**dict(zip(R.KEY_COLUMNS, key, strict=True)), "kept": kept} for key, (kept, _) in decisions.items()]
    with_rows(con, rows, f"DELETE FROM drops USING b WHERE {on('drops')}")
    insert(con, "drops", [row for _, drops in decisions.values() for row in drops])
    with_rows(con, rows, f"UPDATE attempts SET kept = b.kept, dropped_by = NULL, drop_reason = NULL FROM b WHERE {on('attempts')}",
              mark_dropped(IN_BATCH))
