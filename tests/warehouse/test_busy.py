"""A reader that keeps the warehouse file open (a `duckdb` shell, a notebook) never fails the run.

The reader is a real second process holding a read-only connection with an open transaction;
the writer keeps its records, retries, and writes them when the reader goes, or, if the reader
outlives the run, leaves them to the next writer of the run (a resume or `factory build`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from factory.config import load_pipeline
from factory.filters.base import Drop, DropReason
from factory.run.progress import QuietProgress
from factory.run.runner import run_pipeline
from factory.warehouse import Warehouse, run_query
from tests.warehouse.sample import T0, attempt, key, task

HOLD = """\
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
con.execute("BEGIN TRANSACTION")
con.execute("SELECT count(*) FROM attempts").fetchall()
print("open", flush=True)
sys.stdin.readline()
con.close()
"""


@contextmanager
def reader(db: Path) -> Iterator[None]:
    """Another process with `db` open read-only, inside a transaction, until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n", holder.stderr
        yield
    finally:
        holder.communicate("\n", timeout=30)
    assert holder.returncode == 0


def count(db: Path, sql: str = "SELECT count(*) FROM attempts") -> int:
    return run_query(db, sql).rows[0][0]


def wait_for(db: Path, n: int) -> None:
    deadline = time.monotonic() + 60  # a guard against a hang, not a speed assertion
    while count(db) < n:
        assert time.monotonic() < deadline, f"the warehouse never caught up: {count(db)} of {n} attempts"
        time.sleep(0.02)


ATTEMPTS = [attempt("r1", f"t{i}", "A", 0, "pass" if i % 2 else "fail") for i in range(6)]
DROPS = [Drop(key("r1", f"t{i}", "A", 0), "resolved", DropReason.not_resolved).to_row() for i in range(0, 6, 2)]


def test_a_reader_open_at_the_end_fails_nothing_and_the_next_writer_catches_up(tmp_path):
    db = tmp_path / "w.duckdb"
    wh = Warehouse(db, flush_seconds=0.02, flush_records=4, lock_timeout=0.2)
    wh.start_run("r1", "demo", "name: demo\n", "factory run demo.yaml")
    wh.record_tasks("r1", [task(f"t{i}") for i in range(6)])
    wh.flush()
    with reader(db):
        for a in ATTEMPTS:  # more than flush_records: the writer meets the reader and keeps them
            wh.record_attempt(a, started_at=T0, finished_at=T0)
        wh.record_drops("r1", DROPS)
        wh.close()  # the reader is still there: the run ends all the same
        assert wh.behind == 6
        assert count(db) == 0
    assert wh.behind == 6  # a closed writer does not come back for them
    with Warehouse(db, lock_timeout=0.2) as later:  # a resume or `factory build`: the files are the truth
        later.resync(ATTEMPTS)
        later.record_drops("r1", DROPS)
    assert later.behind == 0
    assert run_query(db, "SELECT count(*), count(*) FILTER (WHERE kept) FROM attempts").rows == [(6, 3)]
    assert count(db, "SELECT count(*) FROM turns") == 12
    assert count(db, "SELECT count(*) FROM tasks") == 6


def test_a_reader_open_before_the_writer_starts_delays_the_rows_until_it_goes(tmp_path):
    db = tmp_path / "w.duckdb"
    Warehouse(db).close()  # a file from an earlier run, which a user opened and left open
    with reader(db):
        wh = Warehouse(db, flush_seconds=0.02, flush_records=4, lock_timeout=0.2)
        wh.start_run("r1", "demo", "name: demo\n", "factory run demo.yaml")
        for a in ATTEMPTS:
            wh.record_attempt(a, started_at=T0, finished_at=T0)
        assert wh.behind == 6
        wh.record_drops("r1", DROPS, kept=[a.key for a in ATTEMPTS[1::2]])
        assert count(db) == 0
    wait_for(db, 6)  # the writer's timer found the file free
    wh.record_attempt(attempt("r1", "t6", "A", 0, "pass"), started_at=T0, finished_at=T0)
    wh.close()
    assert wh.behind == 0
    assert run_query(db, "SELECT count(*), count(*) FILTER (WHERE kept) FROM attempts").rows == [(7, 3)]
    assert run_query(db, "SELECT pipeline_name FROM runs").rows == [("demo",)]


def test_a_run_decision_left_behind_counts_every_attempt_it_decides(tmp_path):
    db = tmp_path / "w.duckdb"
    wh = Warehouse(db, flush_seconds=0.02, lock_timeout=0.2)
    wh.resync(ATTEMPTS)
    wh.flush()
    with reader(db):
        wh.record_drops("r1", DROPS)  # a whole filter pass: every attempt of the run is decided by it
        wh.close()
    assert wh.behind == 6
    assert count(db, "SELECT count(*) FROM attempts WHERE kept IS NULL") == 6


async def run_held(path: Path, db: Path, run_id: str):
    """`factory run` (in this process) while another process holds `db` from start to end."""
    with reader(db):
        outcome = await run_pipeline(load_pipeline(path), run_id=run_id, progress=QuietProgress(), command="test")
        assert json.loads((outcome.store.folder / "run.json").read_text())["status"] == "finished"
        assert outcome.build is not None and (outcome.store.dataset_dir / "README.md").exists()
        assert count(db) == 0
    return outcome


def attempt_keys(store) -> list[tuple]:
    return sorted((a.key.instance_id, a.key.teacher, a.key.index) for a in store.attempts())


@pytest.mark.docker
async def test_a_run_with_a_reader_open_finishes_and_a_resume_fills_the_warehouse(tmp_path, docker_client, caplog):
    from tests.test_run import pipeline_file

    db = tmp_path / "held" / "warehouse.duckdb"
    Warehouse(db).close()
    path = pipeline_file(tmp_path, tasks=2, attempts=2, stop=5, extra=f"warehouse:\n  path: {db}\n")
    outcome = await run_held(path, db, "held")
    assert "4 attempt(s) not recorded yet" in caplog.text
    again = await run_pipeline(load_pipeline(path), run_id="held", progress=QuietProgress(), command="test")
    assert again.result.resumed == 4 and again.result.finished == 0
    assert len(attempt_keys(outcome.store)) == 4
    assert sorted(run_query(db, "SELECT instance_id, teacher, attempt_index FROM attempts").rows) == attempt_keys(outcome.store)
    assert count(db, "SELECT count(*) FROM attempts WHERE kept IS NULL") == 0


@pytest.mark.docker
async def test_factory_build_fills_a_warehouse_a_reader_kept_behind(tmp_path, docker_client):
    from tests.test_run import factory, pipeline_file

    db = tmp_path / "runs" / "built" / "warehouse.duckdb"
    Warehouse(db).close()  # the run folder's warehouse, opened by a user before the run starts
    outcome = await run_held(pipeline_file(tmp_path, tasks=2, attempts=2, stop=5), db, "built")
    out, err = factory("build", str(outcome.store.folder)).communicate(timeout=600)
    assert "funnel: attempts 4" in out, err
    assert sorted(run_query(db, "SELECT instance_id, teacher, attempt_index FROM attempts").rows) == attempt_keys(outcome.store)
    assert count(db, "SELECT count(*) FROM attempts WHERE kept IS NULL") == 0
    assert count(db, "SELECT count(*) FROM tasks") == 2
