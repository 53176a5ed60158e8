"""Opening the warehouse file: where the SQL lives, and waiting out the other process's lock.

DuckDB lets one process write a file, or any number of processes read it, never both at once
(a writer takes an exclusive file lock, a reader a shared one). The run's writer therefore
holds the file only for the milliseconds of a flush, and both sides retry a lock error with
a short, bounded backoff (`connect`).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import duckdb
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_exponential_jitter

from factory.errors import FactoryError

STORAGE_VERSION = "v1.4.0"
"""On-disk format the file is created with: DuckDB 1.4 and later (the `duckdb` command-line
client on PyPI included) open it. It is fixed when the file is made and kept afterwards."""

READ_TIMEOUT = 10.0
"""Seconds a reader waits for the writer's lock before it gives up."""

SQL_DIR = resources.files("factory.warehouse") / "sql"


class WarehouseBusy(FactoryError):
    """Another process held the warehouse file for longer than we were willing to wait."""


def schema_sql() -> str:
    """The schema, its funnel steps those of the filter registry (a new filter needs no SQL)."""
    from factory.filters.registry import (
        FUNNEL_STEPS,  # only writers need it: queries start without the filters
    )

    steps = ", ".join(f"({i}, '{name}')" for i, name in enumerate(FUNNEL_STEPS, 1))
    return (SQL_DIR / "schema.sql").read_text().replace("{funnel_steps}", steps)


def is_lock_error(exc: BaseException) -> bool:
    """The file is in use: "Could not set lock on file" (another process has it open), or, within
    this process, a connection open in the other mode ("... with a different configuration")."""
    if isinstance(exc, duckdb.IOException):
        return "lock" in str(exc).lower()
    return isinstance(exc, duckdb.ConnectionException) and "different configuration" in str(exc)


def connect(path: Path, *, read_only: bool, timeout: float) -> duckdb.DuckDBPyConnection:
    """A connection to `path`, retrying the other process's file lock for up to `timeout` s."""
    config = {} if read_only else {"storage_compatibility_version": STORAGE_VERSION}
    retrying = Retrying(
        retry=retry_if_exception(is_lock_error),
        stop=stop_after_delay(timeout),
        wait=wait_exponential_jitter(multiplier=0.005, max=0.25, jitter=0.02),
        reraise=True,
    )
    try:
        for attempt in retrying:
            with attempt:
                return duckdb.connect(str(path), read_only=read_only, config=config)
    except (duckdb.IOException, duckdb.ConnectionException) as exc:
        if is_lock_error(exc):
            holder = "a writer" if read_only else "another process"
            raise WarehouseBusy(
                f"{path}: {holder} held the file lock for {timeout:.0f} s; try again "
                "(an open `duckdb` shell on this file blocks the run's writes until it exits)"
            ) from exc
        raise
    raise AssertionError("unreachable: tenacity either returns or reraises")
