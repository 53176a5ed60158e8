"""The warehouse: every attempt, verdict and filter decision of a run in one DuckDB file.

    Warehouse(path)          the run's only writer; buffers, flushes in short transactions,
                             keeps buffering while a reader holds the file (`behind`, `resync`)
    open_read_only(path)     a reader's connection (waits out a flush in progress)
    run_query(path, sql)     columns and rows of one query, a SQL error as one line
    named_queries()          NAME -> warehouse/queries/NAME.sql

See docs/warehouse.md for the tables, views, named queries and the single-writer design.
"""

from factory.warehouse.connect import STORAGE_VERSION, WarehouseBusy
from factory.warehouse.read import (
    DB_NAME,
    QueryResult,
    find_database,
    named_queries,
    open_read_only,
    resolve_sql,
    run_query,
)

__all__ = [
    "DB_NAME",
    "STORAGE_VERSION",
    "QueryResult",
    "Warehouse",
    "WarehouseBusy",
    "find_database",
    "named_queries",
    "open_read_only",
    "resolve_sql",
    "run_query",
]


def __getattr__(name: str):
    """`Warehouse` (the writer: pyarrow, the schema) loads on first use, so queries start fast."""
    if name == "Warehouse":
        from factory.warehouse.store import Warehouse

        return Warehouse
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
