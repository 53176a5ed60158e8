"""One run's numbers from its warehouse: the built-in named queries where one answers the
question (funnel, pass_rate_by_task, reward_spread, mixed_groups), `v_attempts` for the rest, so
every label and rate is the warehouse's own definition; the run's settings from the pipeline it
recorded in `runs`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from factory.report.model import (
    AttemptPoint,
    DropCount,
    GroupRow,
    MixedGroups,
    RowTokens,
    RunData,
    SpreadPoint,
    Stage,
    TaskRate,
)
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
_ROWS = """
SELECT instance_id, teacher, attempt_index, num_tokens, assistant_tokens
FROM attempts WHERE run_id = ? AND kept AND num_tokens IS NOT NULL
ORDER BY instance_id, teacher, attempt_index
"""


@dataclass(frozen=True)
class RunSettings:
    """What the report needs of the pipeline the run recorded (`runs.pipeline_yaml`)."""

    max_length: int | None
    """The length filter's `max_tokens`, the limit the card gives TRL as `max_length`; None when
    the filter is off or the pipeline cannot be read."""
    template: str
    """The chat template the dataset was rendered with (`output.template`)."""


def run_settings(query: Query, run_id: str) -> RunSettings:
    """Read with the stages' own config models, so a pipeline that leaves a setting out gets the
    stage's default (the report sits below `factory.config`, and the rest of the pipeline may hold
    `${VAR}` references to an environment the report does not have)."""
    from factory.filters import LengthConfig
    from factory.render.config import RenderConfig

    found = query("SELECT pipeline_yaml FROM runs WHERE run_id = ?", [run_id]).rows
    pipeline = _mapping(found[0][0] if found else None)
    filters = pipeline.get("filters") or {}
    if _has(query, "builds"):  # the latest build's settings (`factory build --max-tokens` ...) win
        built = query("SELECT filters_yaml FROM builds WHERE run_id = ?", [run_id]).rows
        filters = _mapping(built[0][0]) if built else filters
    try:
        length = LengthConfig.model_validate(filters.get("length") or {})
        max_length = length.max_tokens if length.enabled else None
    except (ValidationError, AttributeError):
        max_length = None
    output = pipeline.get("output")
    template = output.get("template") if isinstance(output, dict) else None
    return RunSettings(max_length, str(template or RenderConfig().template))


def _mapping(text: str | None) -> dict[str, Any]:
    """A YAML mapping read leniently: anything else (none, a scalar, a broken file) reads as empty."""
    try:
        found = yaml.safe_load(text or "")
    except yaml.YAMLError:
        return {}
    return found if isinstance(found, dict) else {}


def _has(query: Query, table: str, column: str | None = None) -> bool:
    """Whether the warehouse has a view or table (and column): a file written by an older factory may not."""
    sql = "SELECT 1 FROM information_schema.columns WHERE table_name = ?" + (" AND column_name = ?" if column else "")
    return bool(query(sql, [table, column] if column else [table]).rows)


def builtin_query(name: str) -> str:
    """A named query as factory ships it (a user's own warehouse/queries/ does not change the report)."""
    return (SQL_DIR / "queries" / f"{name}.sql").read_text()


def file_query(path: Path) -> Query:
    return lambda sql, params: run_query(path, sql, params)


def load_run(query: Query, run_id: str) -> RunData:
    funnel = query(*only_run(builtin_query("funnel"), run_id)).dicts()
    tasks = query(*only_run(builtin_query("pass_rate_by_task"), run_id)).dicts()
    harness = _has(query, "attempts", "harness")
    label = "teacher || ' / ' || coalesce(harness, '-')" if harness else "teacher"
    language = _has(query, "v_attempts", "language")  # a warehouse written before tasks had one
    rewards = _has(query, "v_rewards")
    return RunData(
        run_id=run_id,
        funnel=[Stage(r["stage"], r["remaining"], r["dropped"]) for r in funnel],
        drops=[DropCount(*row) for row in query(_DROPS, [run_id]).rows],
        tasks=[TaskRate(r["instance_id"], r["graded"], r["passed"], r["pass_rate"], r["band"], r["attempts"], r["kept"])
               for r in tasks],
        attempts=[AttemptPoint(*row) for row in query(_ATTEMPTS, [run_id]).rows],
        groups=[GroupRow(*row) for row in query(_GROUPS.format(label=label), [run_id]).rows],
        group_by="teacher / harness" if harness else "teacher",
        languages=[GroupRow(*row) for row in query(_GROUPS.format(label="coalesce(language, '(unknown)')"),
                                                   [run_id]).rows] if language else [],
        rows=[RowTokens(*row) for row in query(_ROWS, [run_id]).rows] if _has(query, "attempts", "num_tokens") else [],
        max_length=run_settings(query, run_id).max_length,
        spread=[SpreadPoint(r["instance_id"], r["teacher"], r["finished_at"], r["nth"], r["reward_std"], r["mixed"])
                for r in query(*only_run(builtin_query("reward_spread"), run_id)).dicts()] if rewards else [],
        mixed=[MixedGroups(r["teacher"], r["groups"], r["mixed"], r["share_mixed"], r["mean_reward_std"],
                           r["all_passed"], r["all_failed"])
               for r in query(*only_run(builtin_query("mixed_groups"), run_id)).dicts()] if rewards else [],
    )
