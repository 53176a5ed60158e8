"""`factory query` while a run writes: a real second process writes, this one reads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import typer
from typer.testing import CliRunner

from factory.warehouse import run_query
from factory.warehouse.cli import query

ROOT = Path(__file__).parents[2]
N = 400


def test_queries_answer_while_another_process_writes(tmp_path):
    db = tmp_path / "runs" / "live" / "warehouse.duckdb"
    writer = subprocess.Popen([sys.executable, "-m", "tests.warehouse.writer_process", str(db), str(N)],
                              cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdin is not None and writer.stdout.readline() == "ready\n"
    app = typer.Typer()
    app.command()(query)
    seen: list[int] = []
    cli_outputs: list[str] = []
    while (line := writer.stdout.readline()).startswith("wrote"):  # the writer waits, mid-run, open
        seen.append(run_query(db, "SELECT count(*) FROM attempts").rows[0][0])
        out = CliRunner().invoke(app, ["funnel", "--db", str(db), "--format", "csv"])  # as a user would run it
        assert out.exit_code == 0, out.output
        cli_outputs.append(out.stdout)
        seen.append(run_query(db, "SELECT count(*) FROM attempts").rows[0][0])
        writer.stdin.write("go\n")
        writer.stdin.flush()
    stdout, stderr = writer.communicate(timeout=60)
    assert writer.returncode == 0, stderr
    assert line + stdout == "done\n"
    assert seen == sorted(seen), "a reader saw the count go down"
    assert len({c for c in seen if 0 < c < N}) >= 3, f"too few reads while the run was writing: {seen}"
    assert cli_outputs and all(o.startswith("run_id,step,stage,remaining,dropped,pct\n") for o in cli_outputs)
    assert run_query(db, "SELECT count(*), count(*) FILTER (WHERE resolved) FROM attempts").rows == [(N, N * 2 // 3)]
    assert run_query(db, "SELECT count(*) FROM turns").rows == [(2 * N,)]
