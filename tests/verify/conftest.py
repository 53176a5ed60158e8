"""A toy task verified for real: its image, its start state, and patches made by `git diff`."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from factory.config import VerifierConfig
from factory.records import StartState, Task
from factory.sandbox.docker.images import build_image, image_exists
from factory.sandbox.images import RepoImage
from factory.tasks.patches import reverse_patch
from factory.verify.verifier import DockerVerifier

TOY = Path(__file__).parent / "toyrepo"
TOY_IMAGE = "factory/test-toy:v1"
BUG = ("    if x > hi:\n", "    if x > hi + 1:\n")
F2P = ["tests/test_core.py::test_clamp_high"]
P2P = [
    "tests/test_core.py::test_add",
    "tests/test_core.py::test_add_negative",
    "tests/test_core.py::test_clamp_inside",
    "tests/test_core.py::test_clamp_low",
    "tests/test_core.py::test_clamp_far_above",
    "tests/test_pairs.py::test_parse_pair",
    "tests/test_pairs.py::test_parse_pair_strips",
]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def fresh_repo(tmp: Path) -> Path:
    repo = tmp / "repo"
    shutil.copytree(TOY, repo, ignore=shutil.ignore_patterns("__pycache__"))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "clean")
    return repo


@pytest.fixture(scope="session")
def bug_patch(tmp_path_factory) -> str:
    repo = fresh_repo(tmp_path_factory.mktemp("bug"))
    core = repo / "toy/core.py"
    core.write_text(core.read_text().replace(*BUG))
    return git(repo, "diff")


@pytest.fixture(scope="session")
def toy_task(docker_client, bug_patch) -> Task:
    if not image_exists(TOY_IMAGE):
        build_image(RepoImage(TOY_IMAGE, TOY))
    return Task(
        instance_id="toy__clamp.high", repo="factory-test/toyrepo", problem_statement="clamp(11, 0, 10) returns 11",
        image=TOY_IMAGE, start=StartState(bug_patch=bug_patch, hide_paths=["tests/test_core.py"]),
        gold_patch=reverse_patch(bug_patch), FAIL_TO_PASS=F2P, PASS_TO_PASS=P2P, source="test",
    )


@pytest.fixture
def agent_repo(tmp_path, bug_patch) -> Path:
    """The agent's view: the bug applied, the hidden test file gone, committed."""
    repo = fresh_repo(tmp_path)
    subprocess.run(["git", "apply"], input=bug_patch, text=True, cwd=repo, check=True)
    (repo / "tests/test_core.py").unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    return repo


@pytest.fixture
def make_patch(agent_repo) -> Callable[..., str]:
    """Edit the agent's repo (path -> new text, or None to delete) and return `git diff` of it."""

    def make(edits: dict[str, str | None], *, fix: bool = False, symlinks: dict[str, str] | None = None) -> str:
        if fix:
            core = agent_repo / "toy/core.py"
            core.write_text(core.read_text().replace(BUG[1], BUG[0]))
        for path, text in edits.items():
            target = agent_repo / path
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        for link, dest in (symlinks or {}).items():
            (agent_repo / link).symlink_to(dest)
        git(agent_repo, "add", "-A")
        return git(agent_repo, "diff", "--cached", "--binary")

    return make


def task_with_start(toy_task: Task, tmp_path: Path, files: dict[str, str]) -> tuple[Task, Path]:
    """The toy task with `files` in its start state beside the bug (toy/core.py's text is taken
    with the bug put in), and the agent's repo there, committed: every test seen."""
    start = fresh_repo(tmp_path / "start")
    for path, text in files.items():
        (start / path).parent.mkdir(parents=True, exist_ok=True)
        (start / path).write_text(text)
    git(start, "add", "-A")
    git(start, "commit", "-qm", "extras")
    core = start / "toy/core.py"
    core.write_text(core.read_text().replace(*BUG))
    gold = reverse_patch(git(start, "diff"))  # the bug alone, undone
    git(start, "add", "-A")
    bug = git(start, "diff", "--cached", "HEAD~1")
    task = toy_task.model_copy(update={
        "start": toy_task.start.model_copy(update={"bug_patch": bug, "hide_paths": []}), "gold_patch": gold})
    agent = fresh_repo(tmp_path / "agent")
    subprocess.run(["git", "apply"], input=bug, text=True, cwd=agent, check=True)
    git(agent, "add", "-A")
    git(agent, "commit", "-qm", "start")
    return task, agent


@pytest.fixture(scope="session")
def verifier() -> DockerVerifier:
    return DockerVerifier(VerifierConfig(timeout=20, memory="512m"))


@pytest.fixture
def seen_task(toy_task) -> Task:
    """The toy task as SWE-smith tasks are: every hidden test was in the agent's repo too."""
    return toy_task.model_copy(update={"start": toy_task.start.model_copy(update={"hide_paths": []})})


def texts(flags) -> list[str]:
    """Verdict flags as people read them (`kind: detail`)."""
    return [str(flag) for flag in flags]
