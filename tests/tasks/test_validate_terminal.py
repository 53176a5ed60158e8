"""`factory tasks validate` on Harbor tasks, against the real engine: the reference solution's
final state must earn the reward, the untouched state must not, and tests that download at
verify time (verification is offline) are named one line each."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from factory.sandbox.backend import sandbox_backend
from factory.tasks import load_taskset
from factory.tasks.validate import read_results

pytestmark = pytest.mark.docker
ROOT = Path(__file__).parents[2]
DEMO = ROOT / "pipelines" / "tasksets" / "demo-terminal"


def factory(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "factory.cli", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the CLI's subprocess inherits it


@pytest.fixture(scope="module")
def images(docker_client):
    sandbox_backend("docker").build_dockerfile_images(load_taskset(str(DEMO)).tasks)


def test_every_demo_terminal_task_validates(images):
    out = factory("tasks", "validate", str(DEMO), "--jobs", "2")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "7 valid, 0 broken" in out.stdout
    results = read_results(str(DEMO))
    assert all(r["gold"] == ["resolved"] and r["empty"].startswith("tests_failed") for r in results.values())


def _copy(root: Path, name: str) -> Path:
    """A demo task copied under a folder of the demo's name: the same image, edited at will."""
    return Path(shutil.copytree(DEMO / name, root / "demo-terminal" / name))


def test_broken_terminal_tasks_are_named_with_the_reason(images, tmp_path):
    downloads = _copy(tmp_path, "repair-json") / "tests" / "test.sh"
    downloads.write_text("#!/bin/bash\n# fetch the checker first\ncurl -fsSL https://example.com/check.py -o /tmp/check.py"
                         " && python3 /tmp/check.py && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n")
    (_copy(tmp_path, "summarize-sales") / "solution" / "solve.sh").write_text("#!/bin/bash\necho wrong > /tmp/x\n")
    (_copy(tmp_path, "fix-rotate-script") / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    shutil.rmtree(_copy(tmp_path, "recover-branch") / "solution")
    out = factory("tasks", "validate", str(tmp_path / "demo-terminal"))
    assert out.returncode == 1, out.stdout + out.stderr
    results = read_results(str(tmp_path / "demo-terminal"))
    assert {i: r["status"] for i, r in results.items()} == dict.fromkeys(
        ["repair-json", "summarize-sales", "fix-rotate-script", "recover-branch"], "broken")
    assert results["repair-json"]["why"].startswith("its tests download at verify time, and verification has no network: "
                                                    "tests/test.sh:3 `curl -fsSL https://example.com/check.py")
    assert results["summarize-sales"]["why"].startswith("solve.sh does not earn the reward (tests_failed: reward 0")
    assert results["fix-rotate-script"]["why"] == "the untouched start state earns the reward"
    assert results["recover-branch"]["why"].startswith("no solution/solve.sh")
