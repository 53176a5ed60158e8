"""`factory import`: mini-swe-agent trajectories made on SWE-smith-layout tasks
(tests/swesmith_layout.py) are verified by factory's own verifier in fresh containers, then
filtered and built into a dataset like a native run (the real command, in a subprocess).

Two of them were written by mini-swe-agent 2.4.6 itself (tests/interchange/data/, made by
make_minisweagent_samples.py there): one with the gold fix, one with a wrong fix."""

from __future__ import annotations

import json
import os
import shutil
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
REAL = Path(__file__).parent / "data" / "minisweagent-2.4.6"
SOLVED, WRONG = "factory-demo__semverkit.caret-zero-minor", "factory-demo__semverkit.bump-minor-prerelease"


def factory(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "factory.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ})


@pytest.fixture(scope="module")
def imported(tmp_path_factory, docker_client):
    tmp = tmp_path_factory.mktemp("import")
    taskset = write_taskset(tmp / "taskset", ensure_image())
    tasks = {t.instance_id: t for t in load_taskset(str(taskset)).tasks}
    solved, failed = tasks[SOLVED], tasks[WRONG]
    trajs = tmp / "trajs"
    shutil.copytree(REAL, trajs)
    elsewhere = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    msa.write(trajs, "acme__elsewhere-1", msa.trajectory("acme__elsewhere-1", "Not in the task set.", elsewhere))
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
    assert rows[0]["model"] == "deterministic" and rows[0]["cost_usd"] == pytest.approx(0.04)
    assert "```mswea_bash_command" in rows[0]["messages"][2]["content"]  # mini-swe-agent's own scaffold
    submitted = json.loads(next(REAL.rglob(f"{SOLVED}.traj.json")).read_text())["info"]["submission"]
    assert rows[0]["patch"] == submitted


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


TOOLCALL = Path(__file__).parent / "data" / "minisweagent-2.4.6-toolcall"


def test_tool_calling_runs_import_verify_build_and_export_every_kept_row(tmp_path, docker_client):
    """mini-swe-agent 2.4.6's own tool-calling runs (tests/interchange/data, chat completions and
    Responses API layouts; their files hold no tool schema) with its text-format ones: every row
    the filters keep is exported to both formats, each line fit for its format."""
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
    from pydantic import TypeAdapter

    from factory.interchange import openai_chat, sharegpt
    from factory.interchange.tools import MINI_SWE_AGENT_BASH

    taskset = write_taskset(tmp_path / "taskset", ensure_image())
    trajs = tmp_path / "trajs"
    shutil.copytree(TOOLCALL, trajs / "toolcall")
    shutil.copytree(REAL, trajs / "text")
    run_id = f"import-tools-{uuid.uuid4().hex[:8]}"
    out = factory("import", str(trajs), "--format", "mini-swe-agent", "--tasks", str(taskset), "--run-id", run_id,
                  cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    folder = tmp_path / "runs" / run_id
    assert f"imported 9 trajectories into {folder}: 9 verified, 7 resolved" in out.stdout.splitlines()
    kept = pq.read_table(folder / "dataset" / "messages" / "train-00000-of-00001.parquet").to_pylist()
    assert len(kept) == 7  # the 5 + 1 tool-calling runs with the gold fix and the text-format one
    labels = sorted(f"{r['instance_id']}/{r['teacher']}/{r['attempt']}" for r in kept)
    for fmt, check in (("openai", openai_chat.check_line), ("sharegpt", sharegpt.check_line)):
        export = factory("export", str(folder), "--format", fmt, "--out", str(tmp_path / f"{fmt}.jsonl"), cwd=tmp_path)
        assert export.returncode == 0 and export.stdout.startswith("7 row(s) written"), export.stdout + export.stderr
        assert "skipped" not in export.stdout
        lines = [json.loads(line) for line in (tmp_path / f"{fmt}.jsonl").read_text().splitlines()]
        assert len(lines) == 7 and all(check(line) == [] for line in lines)
        if fmt == "sharegpt":
            assert sorted(line["id"] for line in lines) == labels
    chat = [json.loads(line) for line in (tmp_path / "openai.jsonl").read_text().splitlines()]
    called = [line for line in chat if any("tool_calls" in m for m in line["messages"])]
    assert len(called) == 6 and all(line["tools"] == [MINI_SWE_AGENT_BASH] for line in called)
    for line in chat:
        TypeAdapter(list[ChatCompletionMessageParam]).validate_python(line["messages"])
        TypeAdapter(list[ChatCompletionToolParam]).validate_python(line["tools"])
