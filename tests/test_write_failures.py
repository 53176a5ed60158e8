"""Write failures (disk full, read-only) stop the run cleanly: launching stops, every attempt
that could be written stays, the run ends with one line and exit code 1, run.json says
`failed` (when anything can be written), no temporary file survives the next start, and a
resume finishes the run with nothing lost or done twice.

The filesystem is real: a small tmpfs mounted for the test (root only), filled mid-run by a
second writer, or remounted read-only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest

from factory.atomic import write_atomic
from factory.errors import StorageError
from factory.run.folder import RunStore
from factory.warehouse import Warehouse
from tests.test_run import factory, outcomes, pipeline_file
from tests.warehouse.sample import T0, attempt

TASKS, ATTEMPTS = 4, 2


@contextmanager
def small_disk(folder: Path, size: str = "64m") -> Iterator[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        while os.path.ismount(folder):  # read-only binds over it first, then the tmpfs
            subprocess.run(["umount", "-l", str(folder)], check=True)


def fill(folder: Path) -> Path:
    """Take every free byte of `folder`'s filesystem."""
    filler = folder / "filler"
    with filler.open("wb") as fh:
        try:
            while True:
                fh.write(b"\0" * (1 << 20))
                fh.flush()
        except OSError:
            pass
    return filler


def on(output_dir: Path, pipeline: Path) -> Path:
    """`pipeline` with its run folders under `output_dir`."""
    pipeline.write_text(pipeline.read_text().replace(f"dir: {pipeline.parent / 'runs'}", f"dir: {output_dir}"))
    return pipeline


def read_only(folder: Path) -> None:
    """Make `folder` read-only in place: a read-only bind mount over it (a remount of the whole
    filesystem would wait for the files the run holds open)."""
    subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
    subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True)


def writable(folder: Path) -> None:
    subprocess.run(["umount", str(folder)], check=True)


def when_attempts(store_dir: Path, n: int, then) -> threading.Thread:
    """Call `then` once the run has `n` finished attempt files: a fault mid-run, not at its start."""

    def watch() -> None:
        deadline = time.monotonic() + 600  # a guard against a hang, not a speed assertion
        while len(list(store_dir.glob("attempts/*/*/*.json"))) < n and time.monotonic() < deadline:
            time.sleep(0.02)
        then()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


@pytest.mark.docker
@pytest.mark.parametrize("fault", ["disk-full", "read-only"])
def test_a_write_failure_mid_run_stops_it_in_one_line_and_a_resume_finishes_it(tmp_path, docker_client, fault):
    with small_disk(tmp_path / "out") as out:
        path = on(out, pipeline_file(tmp_path, tasks=TASKS, attempts=ATTEMPTS, stop=ATTEMPTS, in_flight=2))
        folder = out / "faulty"
        filler: list[Path] = []
        fault_in = when_attempts(folder, 2, (lambda: filler.append(fill(out))) if fault == "disk-full"
                                 else (lambda: read_only(folder / "attempts")))
        run = factory("run", str(path), "--run-id", "faulty", "--quiet")
        _, err = run.communicate(timeout=900)
        fault_in.join()
        assert run.returncode == 1, err
        assert "Traceback" not in err and "never retrieved" not in err, err
        last = err.strip().splitlines()[-1]
        assert last.startswith("factory: cannot write ") and str(out) in last, last
        assert ("free some space" if fault == "disk-full" else "make it writable") in last
        saved = outcomes(RunStore(folder))
        assert 2 <= len(saved) < TASKS * ATTEMPTS  # the fault came mid-run, and launching stopped

        # the fault is fixed; the same command resumes and finishes
        if fault == "disk-full":
            meta = json.loads((folder / "run.json").read_text())
            assert meta["status"] == "failed" and "cannot write" in meta["error"]
            filler[0].unlink()
        else:
            writable(folder / "attempts")
        again = factory("run", str(path), "--run-id", "faulty", "--quiet")
        _, err = again.communicate(timeout=900)
        assert again.returncode == 0, err
        store = RunStore(folder)
        final = outcomes(store)
        assert len(final) == TASKS * ATTEMPTS  # nothing lost, each unit once (one file per key)
        assert {k: v for k, v in final.items() if k in saved} == saved  # saved attempts were kept, not redone
        assert json.loads((folder / "run.json").read_text())["status"] == "finished"
        assert temp_files(out) == []
        with duckdb.connect(str(store.warehouse_path), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM attempts").fetchone()[0] == TASKS * ATTEMPTS


def test_a_failed_atomic_write_leaves_no_temporary_file(tmp_path):
    with small_disk(tmp_path / "out", size="1m") as out:
        with pytest.raises(OSError):
            write_atomic(out / "big.json", "x" * (2 << 20))
        assert list(out.iterdir()) == []


def test_a_run_started_on_a_read_only_folder_says_so_in_one_line(tmp_path):
    with small_disk(tmp_path / "out", size="1m") as out:
        read_only(out)
        path = on(out / "runs", pipeline_file(tmp_path))
        run = subprocess.run([sys.executable, "-m", "factory.cli", "run", str(path), "--run-id", "ro"],
                             capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    [line] = run.stderr.strip().splitlines()
    assert line.startswith(f"factory: cannot write {out / 'runs'}") and "make it writable" in line


def test_a_warehouse_that_cannot_be_written_tells_its_own_error_and_keeps_the_records(tmp_path, caplog):
    with small_disk(tmp_path / "out", size="8m") as out:
        warehouse = Warehouse(out / "w.duckdb", flush_seconds=3600)
        filler = fill(out)
        for i in range(50):
            warehouse.record_attempt(attempt("r", f"t{i}", "A", 0, "pass"), started_at=T0, finished_at=T0)
        with pytest.raises(StorageError) as raised:
            warehouse.flush()
        assert "no transaction is active" not in str(raised.value)
        assert "cannot write the warehouse" in str(raised.value)
        warehouse.close()  # does not raise: the attempt files are the truth
        assert warehouse.behind == 50 and "could not be written" in (warehouse.why_behind or "")
        filler.unlink()
        again = Warehouse(out / "w.duckdb")
        again.resync([attempt("r", f"t{i}", "A", 0, "pass") for i in range(50)])
        again.close()
        with duckdb.connect(str(out / "w.duckdb"), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM attempts").fetchone()[0] == 50
