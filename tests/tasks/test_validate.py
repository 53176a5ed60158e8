"""Task validation and start states against real containers and the real verifier."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from factory.config import SandboxConfig
from factory.sandbox.docker import DockerSandbox
from factory.sandbox.images import ensure_images
from factory.tasks import load_taskset
from factory.tasks.validate import read_results, results_path
from tests.readonly import listing, read_only

pytestmark = pytest.mark.docker
ROOT = Path(__file__).parents[2]
DEMO = ROOT / "pipelines/tasksets/demo"


def factory(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "factory.cli", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.fixture(scope="module")
def demo_tasks(docker_client):
    tasks = load_taskset(str(DEMO), skip_invalid=False).tasks
    ensure_images(tasks, DEMO)
    return tasks


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the CLI's subprocess inherits it


def test_every_demo_task_validates_in_real_containers(demo_tasks, tmp_path):
    # the demo folder itself, read-only: results go to the cache, nothing into the folder
    before = listing(DEMO)
    with read_only(DEMO, tmp_path / "demo") as folder:
        out = factory("tasks", "validate", str(folder), "--jobs", "2")
        assert out.returncode == 0, out.stdout + out.stderr
        assert f"{len(demo_tasks)} valid, 0 broken" in out.stdout
        assert listing(DEMO) == before
        results = json.loads(results_path(str(folder)).read_text())
        assert {r["status"] for r in results.values()} == {"valid"} and len(results) == len(demo_tasks)
        # the measured time travels with the tasks: it sets each one's verification timeout
        assert all(r["seconds"] > 0 for r in results.values())
        loaded = load_taskset(str(folder)).tasks
        assert {t.instance_id: t.test_seconds for t in loaded} == {i: r["seconds"] for i, r in results.items()}


def test_broken_tasks_are_reported_with_the_reason_and_then_skipped(demo_tasks, tmp_path):
    rows = [json.loads(line) for line in (DEMO / "tasks.jsonl").read_text().splitlines()[:4]]
    rows[0]["instance_id"] += ".gold-fails"
    rows[0]["FAIL_TO_PASS"] = [rows[0]["FAIL_TO_PASS"][0].split("::")[0] + "::test_that_does_not_exist"]
    rows[1]["instance_id"] += ".already-passes"
    rows[1]["FAIL_TO_PASS"] = rows[1]["PASS_TO_PASS"][:1]  # passes with or without the fix
    rows[2]["instance_id"] += ".alt-fails"
    rows[2]["alt_fixes"].append(rows.pop(3)["alt_fixes"][0])  # another task's fix: it fixes nothing here
    path = tmp_path / "broken.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = factory("tasks", "validate", str(path))
    assert out.returncode == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.jsonl", "cache"]  # nothing beside the file
    results = read_results(str(path))
    first, second, third = (results[r["instance_id"]] for r in rows)
    assert first["status"] == "broken" and "gold fix does not resolve" in first["why"] and "missing" in first["why"] or "tests" in first["why"]
    assert second["status"] == "broken" and "empty patch resolves" in second["why"]
    assert third["status"] == "broken" and third["why"].startswith("alt_fixes[1] does not resolve")
    # a pipeline that loads this source now skips both, each with its reason
    report = load_taskset(str(path))
    assert report.tasks == [] and {b.field for b in report.skipped} == {"validation"}


async def test_swesmith_start_state_hides_the_failing_tests_and_is_clean(demo_tasks):
    task = demo_tasks[0]
    sandbox = await DockerSandbox.create(task.image, SandboxConfig(), workdir=task.workdir)
    try:
        await sandbox.prepare(task.start)
        for hidden in task.start.hide_paths:
            assert (await sandbox.exec(f"test -e {hidden}")).exit_code == 1
        assert task.start.hide_paths == sorted({i.split("::")[0] for i in task.FAIL_TO_PASS}, key=task.start.hide_paths.index)
        assert await sandbox.diff() == ""
        assert (await sandbox.exec("git status --porcelain")).output == ""
        assert (await sandbox.exec("git log --oneline | wc -l")).output.strip() == "1"
    finally:
        await sandbox.close()


def test_cli_list_show_and_verify_json(demo_tasks, tmp_path):
    listed = factory("tasks", "list", str(DEMO)).stdout.splitlines()
    assert [line.split("\t")[0] for line in listed] == [t.instance_id for t in demo_tasks]
    task = demo_tasks[0]
    shown = json.loads(factory("tasks", "show", str(DEMO), task.instance_id).stdout)
    assert shown["FAIL_TO_PASS"] == task.FAIL_TO_PASS
    assert factory("tasks", "show", str(DEMO), "nope").returncode == 2

    gold = tmp_path / "gold.diff"
    gold.write_text(task.gold_patch)
    out = factory("verify", "--taskset", str(DEMO), "--instance", task.instance_id, "--patch", str(gold), "--json")
    assert out.returncode == 0, out.stderr
    verdict = json.loads(out.stdout)
    assert verdict["resolved"] is True and verdict["reason"] is None and verdict["decided_by"] == "tests"
    assert verdict["controls"] >= 1 and isinstance(verdict["flags"], list)  # which checks ran, what a reviewer should see
    assert set(verdict["tests"]) == set(task.FAIL_TO_PASS + task.PASS_TO_PASS)
    latin1 = tmp_path / "latin1.diff"  # the fix plus a Latin-1 data file: a diff that is not UTF-8
    latin1.write_bytes(task.gold_patch.encode() + b"diff --git a/caf\xe9.txt b/caf\xe9.txt\nnew file mode 100644\n"
                       b"--- /dev/null\n+++ b/caf\xe9.txt\n@@ -0,0 +1 @@\n+caf\xe9\n")
    out = factory("verify", "--taskset", str(DEMO), "--instance", task.instance_id, "--patch", str(latin1), "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["resolved"] is True, out.stderr[-2000:]
    empty = tmp_path / "empty.diff"
    empty.write_text("")
    out = factory("verify", "--taskset", str(DEMO), "--instance", task.instance_id, "--patch", str(empty), "--json")
    refused = json.loads(out.stdout)
    assert out.returncode == 1 and (refused["reason"], refused["decided_by"]) == ("tests_failed", "tests")
