"""`factory import`: mini-swe-agent trajectories made on SWE-smith-layout tasks
(tests/swesmith_layout.py) are verified by factory's own verifier in fresh containers, then
filtered and built into a dataset like a native run (the real command, in a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from factory.tasks import load_taskset
from tests.interchange import minisweagent_files as msa
from tests.swesmith_layout import ensure_image, write_taskset

pytestmark = pytest.mark.docker


def factory(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "factory.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ})


def wrong_fix(gold: str) -> str:
    """The gold fix with its first added line changed: it applies, and the tests still fail."""
    lines = gold.splitlines(keepends=True)
    i = next(i for i, line in enumerate(lines) if line.startswith("+") and not line.startswith("+++"))
    lines[i] = "+    pass  # not the fix\n" if lines[i].strip() != "+" else lines[i]
    return "".join(lines)


@pytest.fixture(scope="module")
def imported(tmp_path_factory, docker_client):
    tmp = tmp_path_factory.mktemp("import")
    taskset = write_taskset(tmp / "taskset", ensure_image())
    solved, failed = load_taskset(str(taskset)).tasks[:2]
    trajs = tmp / "trajs"
    msa.write(trajs, solved.instance_id, msa.trajectory(solved.instance_id, solved.problem_statement, solved.gold_patch))
    msa.write(trajs, failed.instance_id, msa.trajectory(failed.instance_id, failed.problem_statement,
                                                       wrong_fix(failed.gold_patch)))
    msa.write(trajs, "acme__elsewhere-1", msa.trajectory("acme__elsewhere-1", "Not in the task set.", "diff"))
    (trajs / "half-written.traj.json").write_text('{"info": {"exit_status": "Submitted"}, "messa')
    run_id = f"import-{uuid.uuid4().hex[:8]}"
    out = factory("import", str(trajs), "--format", "mini-swe-agent", "--tasks", str(taskset), "--run-id", run_id,
                  cwd=tmp)
    return tmp / "runs" / run_id, out, solved, failed


def test_the_import_verifies_each_patch_and_keeps_the_one_that_resolves(imported):
    folder, out, solved, failed = imported
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"skipped {folder.parents[1] / 'trajs' / 'half-written.traj.json'}: file: not JSON")
    assert f"imported 3 trajectories into {folder}: 2 verified, 1 resolved" in lines
    assert any("acme__elsewhere-1/" in line and "not verified: no task 'acme__elsewhere-1'" in line for line in lines)
    rows = pq.read_table(folder / "dataset" / "messages" / "train-00000-of-00001.parquet").to_pylist()
    assert [r["instance_id"] for r in rows] == [solved.instance_id]
    assert rows[0]["model"] == "anthropic/claude-sonnet-4-5-20250929" and rows[0]["cost_usd"] == pytest.approx(0.12)
    assert "```mswea_bash_command" in rows[0]["messages"][2]["content"]  # mini-swe-agent's own scaffold
    assert rows[0]["patch"] == solved.gold_patch


def test_the_imported_run_is_an_ordinary_run(imported):
    folder, _, solved, failed = imported
    attempts = {json.loads(p.read_text())["key"]["instance_id"]: json.loads(p.read_text())
                for p in (folder / "attempts").rglob("*.json")}
    assert attempts[solved.instance_id]["verdict"]["resolved"] is True
    assert attempts[failed.instance_id]["verdict"]["reason"] == "tests_failed"
    assert attempts["acme__elsewhere-1"]["verdict"] is None
    assert all(a["trajectory"]["harness"] == "mini-swe-agent" for a in attempts.values())
    query = factory("query", "SELECT instance_id, outcome FROM v_attempts ORDER BY instance_id", "--db",
                    str(folder / "warehouse.duckdb"), "--format", "csv", cwd=folder)
    assert query.returncode == 0, query.stderr
    assert f"{solved.instance_id},resolved" in query.stdout and f"{failed.instance_id},unresolved:tests_failed" in query.stdout
    export = factory("export", str(folder), "--format", "openai", "--out", str(folder / "train.jsonl"), cwd=folder)
    assert export.returncode == 0 and export.stdout.startswith("1 row(s) written"), export.stderr
    again = factory("import", str(folder.parents[1] / "trajs"), "--format", "mini-swe-agent", "--tasks", "x",
                    "--run-id", folder.name, cwd=folder.parents[1])
    assert again.returncode == 2 and "already exists" in again.stderr and again.stderr.count("\n") == 1
