"""Reading the warehouse: read-only connections, named queries, one-line SQL errors.

A reader opens the file `read_only=True`, which DuckDB grants while no writer holds it; the
run's writer holds it only during a flush, so `connect` retries a lock error with a short
backoff for up to `READ_TIMEOUT` seconds. Readers close as soon as the result is fetched so
that they, in turn, do not keep the writer out.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

import duckdb

from factory.errors import UsageError
from factory.warehouse.connect import READ_TIMEOUT, SQL_DIR, connect

DB_NAME = "warehouse.duckdb"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class QueryResult(NamedTuple):
    columns: list[str]
    rows: list[tuple[Any, ...]]

    def dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


def open_read_only(path: Path, timeout: float = READ_TIMEOUT) -> duckdb.DuckDBPyConnection:
    """A read-only connection, waiting out a flush in progress; close it soon."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"no warehouse at {path} (a run creates runs/<run id>/{DB_NAME})")
    return connect(path, read_only=True, timeout=timeout)


def run_query(path: Path, sql: str, params: list[Any] | None = None, *,
              timeout: float = READ_TIMEOUT) -> QueryResult:
    """Run `sql` on a read-only connection and fetch it all; a SQL error is a one-line `UsageError`."""
    con = open_read_only(path, timeout)
    try:
        cursor = con.execute(sql, params or [])
        if cursor.description is None:
            return QueryResult([], [])
        columns = [d[0] for d in cursor.description]
        return QueryResult(columns, cursor.fetchall())
    except duckdb.Error as exc:
        raise UsageError(f"SQL error: {one_line(exc)}") from exc
    finally:
        con.close()


def one_line(exc: BaseException) -> str:
    """DuckDB's message without its LINE/caret excerpt, on one line."""
    lines = [line.strip() for line in str(exc).splitlines()]
    kept = [line for line in lines if line and not line.startswith("LINE ") and set(line) != {"^"}]
    return " ".join(kept)


# ---------------------------------------------------------------------- named queries


def query_dirs(cwd: Path | None = None) -> list[Path]:
    """Where NAME.sql is looked up: ./warehouse/queries first (your own), then the package's."""
    local = (cwd or Path.cwd()) / "warehouse" / "queries"
    return [local, Path(str(SQL_DIR / "queries"))]


def named_queries(cwd: Path | None = None) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder in reversed(query_dirs(cwd)):
        if folder.is_dir():
            found.update({p.stem: p for p in sorted(folder.glob("*.sql"))})
    return dict(sorted(found.items()))


def resolve_sql(sql_or_name: str, cwd: Path | None = None) -> str:
    """The SQL of a named query when given a bare name (one word), else the text itself."""
    text = sql_or_name.strip()
    if not _NAME.fullmatch(text):
        return text
    queries = named_queries(cwd)
    if text not in queries:
        raise UsageError(f"unknown query {text!r}; named queries: {', '.join(queries)} (or pass SQL)")
    return queries[text].read_text()


def only_run(sql: str, run_id: str) -> tuple[str, list[Any]]:
    """`sql` narrowed to one run: it must return a `run_id` column (every named query does)."""
    body = _strip_sql(sql)
    return f"SELECT * FROM (\n{body}\n) AS q WHERE q.run_id = ?", [run_id]


def _strip_sql(sql: str) -> str:
    """Drop trailing comment lines and semicolons so the query nests as a subquery."""
    lines = sql.strip().splitlines()
    while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith("--")):
        lines.pop()
    return "\n".join(lines).rstrip().rstrip(";").rstrip()


def find_database(cwd: Path | None = None) -> Path:
    """The most recently written runs/*/warehouse.duckdb under `cwd` (also one folder down,
    e.g. pipelines/runs/*, where a pipeline's relative `output.dir` puts it)."""
    root = cwd or Path.cwd()
    candidates = [*root.glob(f"runs/*/{DB_NAME}"), *root.glob(f"*/runs/*/{DB_NAME}")]
    if not candidates:
        raise UsageError(f"no warehouse found under {root} (looked for runs/*/{DB_NAME}); pass --db PATH")
    return max(candidates, key=lambda p: p.stat().st_mtime)
