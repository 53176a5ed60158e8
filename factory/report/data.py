"""One run's numbers from its warehouse: the built-in named queries where one answers the
question (funnel, pass_rate_by_task), `v_attempts` for the rest, so every label and rate is
the warehouse's own definition."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from factory.report.model import AttemptPoint, DropCount, GroupRow, RunData, Stage, TaskRate
from factory.warehouse.connect import SQL_DIR
from factory.warehouse.read import QueryResult, only_run, run_query

Query = Callable[[str, list[Any]], QueryResult]
"""Runs SQL with parameters: `run_query` on a file, or a live writer's `Warehouse.query`."""

_DROPS = """
SELECT a.dropped_by, a.drop_reason, count(*) AS n
FROM v_attempts a LEFT JOIN filter_steps s ON s.filter = a.dropped_by
WHERE a.run_id = ? AND a.dropped_by IS NOT NULL
GROUP BY a.dropped_by, a.drop_reason, s.step
ORDER BY s.step NULLS LAST, n DESC, a.drop_reason
"""
_ATTEMPTS = """
SELECT started_at, finished_at, kept, cost_usd, coalesce(n_turns, 0), coalesce(total_tokens, 0),
       coalesce(exit, '(none)'), outcome
FROM v_attempts WHERE run_id = ?
ORDER BY finished_at NULLS LAST, instance_id, teacher, attempt_index
"""
_GROUPS = """
SELECT {label} AS label, bool_or(coalesce(scripted, false)), count(*), count(*) FILTER (WHERE graded),
       count(*) FILTER (WHERE graded AND passed), count(*) FILTER (WHERE kept), sum(cost_usd),
       count(*) FILTER (WHERE cost_usd IS NULL)
FROM v_attempts WHERE run_id = ?
GROUP BY label ORDER BY label
"""


def builtin_query(name: str) -> str:
    """A named query as factory ships it (a user's own warehouse/queries/ does not change the report)."""
    return (SQL_DIR / "queries" / f"{name}.sql").read_text()


def file_query(path: Path) -> Query:
    return lambda sql, params: run_query(path, sql, params)


def load_run(query: Query, run_id: str) -> RunData:
    funnel = query(*only_run(builtin_query("funnel"), run_id)).dicts()
    tasks = query(*only_run(builtin_query("pass_rate_by_task"), run_id)).dicts()
    harness = query("SELECT 1 FROM information_schema.columns WHERE table_name = 'attempts' "
                    "AND column_name = 'harness'", []).rows
    label = "teacher || ' / ' || coalesce(harness, '-')" if harness else "teacher"
    language = query("SELECT 1 FROM information_schema.columns WHERE table_name = 'v_attempts' "
                     "AND column_name = 'language'", []).rows  # a warehouse written before tasks had one
    return RunData(
        run_id=run_id,
        funnel=[Stage(r["stage"], r["remaining"], r["dropped"]) for r in funnel],
        drops=[DropCount(*row) for row in query(_DROPS, [run_id]).rows],
        tasks=[TaskRate(r["instance_id"], r["graded"], r["passed"], r["pass_rate"], r["band"]) for r in tasks],
        attempts=[AttemptPoint(*row) for row in query(_ATTEMPTS, [run_id]).rows],
        groups=[GroupRow(*row) for row in query(_GROUPS.format(label=label), [run_id]).rows],
        group_by="teacher / harness" if harness else "teacher",
        languages=[GroupRow(*row) for row in query(_GROUPS.format(label="coalesce(language, '(unknown)')"),
                                                   [run_id]).rows] if language else [],
    )
