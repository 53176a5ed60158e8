"""Latency of every named warehouse query over a large synthetic warehouse, beside a plain count.

    .venv/bin/python bench/warehouse_bench.py                 # 1,000,000 attempt rows
    .venv/bin/python bench/warehouse_bench.py --rows 100000   # a quick run

The warehouse is made with the real schema (`Warehouse(path)`), then filled by DuckDB's own
generators (`range()`, `hash()`, `random()`): attempts of 3 teachers on rows/50 tasks over 2 runs,
each task with its own solve rate, some infrastructure errors and runs out of turns, filter
decisions for every attempt (resolved, loops, dedup, cap) and one test result per attempt. Turns
are not generated: no named query reads them. Each query is timed the way `factory query` runs it
(open read-only, run, fetch, close), median of --repeat runs; the baseline is
`SELECT count(*) FROM attempts` timed the same way in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from factory.warehouse import Warehouse, named_queries, run_query

FILL = """
INSERT INTO attempts (run_id, instance_id, teacher, attempt_index, repo, model, scripted, exit, error_class,
                      resolved, verdict_reason, n_turns, input_tokens, output_tokens, cache_read_tokens,
                      cache_write_tokens, cost_usd, wall_seconds, verify_seconds, patch_bytes, patch_files, flags,
                      started_at, finished_at)
SELECT 'bench-' || (task % 2), 'task-' || task, 'teacher-' || teacher, i // (tasks * 3), 'repo-' || (task % 200),
       'model-' || teacher, teacher = 2,
       CASE WHEN crash THEN 'sandbox_error' WHEN u < 0.08 THEN 'max_turns' ELSE 'submitted' END,
       CASE WHEN crash THEN 'SandboxCrashed' END,
       CASE WHEN crash OR u < 0.08 THEN NULL ELSE v < p END,
       CASE WHEN NOT crash AND u >= 0.08 AND v >= p THEN 'tests_failed' END,
       turns, turns * 9000, turns * 400, turns * 7000, 900, CASE WHEN teacher < 2 THEN turns * 0.004 END,
       turns * 6.5, 40.0, 900, 1, [], TIMESTAMP '2025-01-01' + to_seconds(i), TIMESTAMP '2025-01-01' + to_seconds(i + 60)
FROM (
    SELECT range AS i, range % $tasks AS task, (range // $tasks) % 3 AS teacher, $tasks AS tasks,
           (hash(range % $tasks) % 1000) / 1000.0 AS p, random() AS u, random() AS v, random() < 0.02 AS crash,
           5 + (hash(range) % 40)::INTEGER AS turns
    FROM range($rows)
)
"""
DECIDE = """
INSERT INTO drops
SELECT run_id, instance_id, teacher, attempt_index,
       CASE WHEN NOT coalesce(resolved, false) THEN 'resolved' WHEN r < 0.05 THEN 'loops'
            WHEN r < 0.25 THEN 'dedup' ELSE 'cap' END,
       CASE WHEN NOT coalesce(resolved, false) THEN 'not_resolved' WHEN r < 0.05 THEN 'repeated_action'
            WHEN r < 0.25 THEN 'duplicate_patch' ELSE 'over_cap' END,
       ''
FROM (SELECT *, random() AS r FROM attempts)
WHERE NOT coalesce(resolved, false) OR r < 0.6;
UPDATE attempts SET kept = true;
UPDATE attempts SET kept = false, dropped_by = d.filter, drop_reason = d.reason FROM drops d
WHERE d.run_id = attempts.run_id AND d.instance_id = attempts.instance_id AND d.teacher = attempts.teacher
  AND d.attempt_index = attempts.attempt_index;
INSERT INTO tasks SELECT DISTINCT run_id, instance_id, repo, 'bench', 'img', '', ['t::f2p'], ['t::p2p'] FROM attempts;
INSERT INTO test_results
SELECT run_id, instance_id, teacher, attempt_index, 't::f2p', CASE WHEN resolved THEN 'passed' ELSE 'failed' END, 'F2P'
FROM attempts;
"""


def build(path: Path, rows: int) -> None:
    Warehouse(path).close()
    tasks = max(1, rows // 50)
    with duckdb.connect(str(path)) as con:
        con.execute(FILL.replace("$tasks", str(tasks)).replace("$rows", str(rows)))
        con.execute(DECIDE)


def timed(path: Path, sql: str, repeat: int) -> tuple[float, int]:
    times, n = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        n = len(run_query(path, sql).rows)
        times.append(time.perf_counter() - start)
    return statistics.median(times), n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000, help="synthetic attempt rows")
    parser.add_argument("--repeat", type=int, default=3, help="runs per query; the median is reported")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "warehouse.duckdb"
        start = time.perf_counter()
        build(path, args.rows)
        made = time.perf_counter() - start
        size = path.stat().st_size / 2**20
        print(f"warehouse bench: {args.rows:,} attempt rows, {max(1, args.rows // 50):,} tasks, 2 runs, "
              f"3 teachers; built in {made:.1f} s ({size:.0f} MiB); median of {args.repeat}")
        base, _ = timed(path, "SELECT count(*) FROM attempts", args.repeat)
        print(f"{'query':<24}{'rows out':>10}{'median ms':>12}{'x count(*)':>12}")
        print(f"{'count(*) (baseline)':<24}{1:>10}{base * 1000:>12.1f}{1.0:>12.1f}")
        for name, file in named_queries().items():
            seconds, n = timed(path, file.read_text(), args.repeat)
            print(f"{name:<24}{n:>10,}{seconds * 1000:>12.1f}{seconds / base:>12.1f}")


if __name__ == "__main__":
    main()
