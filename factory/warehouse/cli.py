"""`factory query SQL|NAME [--db PATH] [--format table|csv|json] [--run RUN_ID]`.

NAME runs a named query (`warehouse/queries/NAME.sql`); anything else is SQL. Without `--db`
the most recently written runs/*/warehouse.duckdb under the current folder is read. Works while
a run is writing: the reader waits out a flush (milliseconds) and never blocks the run for
longer than the query takes.
"""

from __future__ import annotations

import csv
import json
import sys
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any
from uuid import UUID

import typer
from rich.console import Console
from rich.table import Table

from factory.errors import UsageError
from factory.warehouse.read import QueryResult, find_database, only_run, resolve_sql, run_query

FORMATS = ("table", "csv", "json")


def query(
    sql_or_name: Annotated[str, typer.Argument(
        metavar="SQL|NAME", help="SQL, or the name of a query in warehouse/queries/ (e.g. funnel, learnable_tasks).")],
    db: Annotated[Path | None, typer.Option(
        help="Warehouse file; default: the most recent runs/*/warehouse.duckdb here.")] = None,
    format: Annotated[str, typer.Option("--format", "-f", help="table, csv or json (a list of objects).")] = "table",
    run: Annotated[str | None, typer.Option(help="Only rows of this run id (the query must return run_id).")] = None,
) -> None:
    """Query the warehouse (DuckDB), also while a run is writing it."""
    if format not in FORMATS:
        raise UsageError(f"unknown format {format!r}; valid formats: {', '.join(FORMATS)}")
    sql = resolve_sql(sql_or_name)
    path = db if db is not None else find_database()
    params: list[Any] = []
    if run is not None:
        known = [row[0] for row in run_query(path, "SELECT run_id FROM runs ORDER BY started_at").rows]
        if run not in known:  # zero rows would read as "nothing happened" rather than "wrong id"
            raise UsageError(f"--run {run}: no such run in {path} (runs there: {', '.join(known) or 'none'})")
        sql, params = only_run(sql, run)
    try:
        result = run_query(path, sql, params)
    except UsageError as exc:
        if run is not None and "run_id" in str(exc):
            raise UsageError(f"--run needs a query that returns a run_id column ({exc})") from exc
        raise
    if format == "json":
        typer.echo(json.dumps(result.dicts(), default=_jsonable, indent=2))
    elif format == "csv":
        write_csv(result)
    else:
        # piped: the table at its natural width; on a terminal: cells fold to fit it
        print_table(result, Console() if sys.stdout.isatty() else Console(width=100_000))


def write_csv(result: QueryResult) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(result.columns)
    for row in result.rows:
        writer.writerow([_csv_cell(v) for v in row])


def print_table(result: QueryResult, console: Console) -> None:
    table = Table(header_style="bold")
    for i, name in enumerate(result.columns):
        numeric = any(isinstance(row[i], int | float | Decimal) and not isinstance(row[i], bool) for row in result.rows)
        table.add_column(name, justify="right" if numeric else "left", overflow="fold")
    for row in result.rows:
        table.add_row(*(_cell(v) for v in row))
    console.print(table)
    console.print(f"({len(result.rows)} row{'s' if len(result.rows) != 1 else ''})", style="dim")


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 1000 else f"{value:.4f}".rstrip("0").rstrip(".")
    if isinstance(value, list | dict):
        return json.dumps(value, default=_jsonable)
    return str(value)


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, default=_jsonable)
    return _jsonable(value) if isinstance(value, datetime | date | time | timedelta | Decimal | UUID) else value


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, UUID | bytes):
        return str(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
