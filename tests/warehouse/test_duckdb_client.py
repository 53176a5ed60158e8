"""The warehouse is a plain DuckDB file: other DuckDB clients open it read-only and run the queries."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from factory.warehouse import named_queries, run_query
from tests.warehouse import sample

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    return sample.build(tmp_path_factory.mktemp("client") / "warehouse.duckdb")


@pytest.mark.parametrize("name", sorted(named_queries()))
def test_each_query_file_runs_on_a_plain_read_only_connection(db, name):
    """What `duckdb -readonly warehouse.duckdb < warehouse/queries/NAME.sql` does."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute((ROOT / "warehouse" / "queries" / f"{name}.sql").read_text()).fetchall()
    assert rows == run_query(db, named_queries()[name].read_text()).rows


def test_two_readers_at_once(db):
    with duckdb.connect(str(db), read_only=True) as first:
        assert run_query(db, "SELECT count(*) FROM attempts").rows == [(14,)]
        assert first.execute("SELECT count(*) FROM v_attempts").fetchone() == (14,)


def duckdb_cli() -> str | None:
    """The `duckdb` command-line client (PyPI: duckdb-cli), on PATH or beside this Python."""
    beside = Path(sys.executable).parent / "duckdb"
    return shutil.which("duckdb") or (str(beside) if beside.exists() else None)


def test_the_duckdb_command_line_client_reads_it(db):
    cli = duckdb_cli()
    if cli is None:
        pytest.skip("no `duckdb` command-line client installed (pip install duckdb-cli)")
    out = subprocess.run([cli, "-readonly", "-csv", str(db), "-c", ".read warehouse/queries/learnable_tasks.sql"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [(r["run_id"], r["instance_id"], r["passed"]) for r in rows] == [("r1", "mid2", "1"), ("r1", "mid", "3"),
                                                                              ("r2", "solo", "1")]
