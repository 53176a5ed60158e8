"""The commands that work on a finished run: show, render, build, push (real subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from factory.config import load_pipeline
from factory.run.progress import QuietProgress
from factory.run.runner import run_pipeline
from tests.output.fake_hub import fake_hub  # noqa: F401 - the local Hub stand-in
from tests.test_run import pipeline_file

pytestmark = pytest.mark.docker
ROOT = Path(__file__).parent.parent


def factory(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "factory.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, docker_client):
    import asyncio

    tmp = tmp_path_factory.mktemp("run")
    path = pipeline_file(tmp, tasks=2, attempts=2, stop=5, profile="{solve: 0.7, wrong_fix: 0.3}")
    outcome = asyncio.run(run_pipeline(load_pipeline(path), run_id="cmds", progress=QuietProgress(), command="test"))
    return outcome.store


def test_show_summarises_the_run_and_one_attempt(finished_run):
    out = factory("show", str(finished_run.folder))
    assert out.returncode == 0, out.stderr
    assert "funnel    attempts 4 ->" in out.stdout and "scripted-test:" in out.stdout
    attempt = finished_run.attempts()[0]
    spec = f"{attempt.key.instance_id}/{attempt.key.teacher}/{attempt.key.index}"
    one = factory("show", str(finished_run.folder), spec)
    assert one.returncode == 0, one.stderr
    assert "[scripted teacher]" in one.stdout and "verdict" in one.stdout and "patch" in one.stdout
    assert factory("show", str(finished_run.folder), "no-such-task/0").returncode == 2
    assert factory("show", "no-such-run").returncode == 2


def test_render_marks_the_trained_spans_of_a_run_attempt(finished_run):
    attempt = finished_run.attempts()[0]
    out = factory("render", str(finished_run.folder), f"{attempt.key.instance_id}/0", "--no-color")
    assert out.returncode == 0, out.stderr
    assert "⟦" in out.stdout and "<|im_start|>assistant" in out.stdout
    # what the help says: the attempt file's path in the run folder works too
    file = next(finished_run.attempts_dir.rglob("*.json")).relative_to(finished_run.folder)
    by_path = factory("render", str(finished_run.folder), str(file), "--no-color")
    assert by_path.returncode == 0 and "⟦" in by_path.stdout, by_path.stderr
    alone = factory("render", str(finished_run.folder))
    assert alone.returncode == 2 and alone.stderr.startswith("factory: ") and "factory show" in alone.stderr


def test_build_refilters_without_new_attempts(finished_run):
    before = sorted(p.name for p in finished_run.attempts_dir.rglob("*.json"))
    out = factory("build", str(finished_run.folder), "--per-task", "1")
    assert out.returncode == 0, out.stderr
    assert "funnel: attempts 4" in out.stdout
    assert sorted(p.name for p in finished_run.attempts_dir.rglob("*.json")) == before
    build = json.loads((finished_run.folder / "build.json").read_text())
    assert build["rows"] <= 2  # at most one per task now
    assert factory("build", str(finished_run.folder), "--per-task", "0").returncode == 2


def test_push_sends_data_and_card_to_the_hub_in_one_commit(finished_run, fake_hub):  # noqa: F811
    env = {**os.environ, "HF_HUB_DISABLE_XET": "1"}
    out = factory("push", str(finished_run.folder), "--repo-id", "my-org/demo-sft", env=env)
    assert out.returncode == 0, out.stderr
    repo = fake_hub.repo("my-org/demo-sft")
    [commit] = repo.history()[:1]
    names = set(commit.files)
    assert "README.md" in names and any(n.startswith("messages/") and n.endswith(".parquet") for n in names)
    assert fake_hub.token not in out.stdout + out.stderr
    missing = factory("push", str(finished_run.folder), "--repo-id", "my-org/x",
                      env={k: v for k, v in env.items() if k != "HF_TOKEN"} | {"HF_HOME": "/nonexistent"})
    assert missing.returncode == 2 and "token" in missing.stderr.lower()
