"""A demo task's repo at its gold fix with a writer's copies planted, run by the task's own command in
the language's image: what a copy must do under a correct fix (fail) is seen, not assumed."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

from factory.records import Task, TestStatus
from factory.tasks import load_taskset
from factory.verify.frameworks.copies.base import Copies, CopyWriter
from factory.verify.results import read, status_of
from tests.verify.conftest import git

TASKSETS = Path(__file__).parents[3] / "pipelines/tasksets"


def demo_tasks(name: str) -> list[Task]:
    return load_taskset(str(TASKSETS / name), skip_invalid=False).tasks


def gold_repo(tmp: Path, name: str, task: Task) -> Path:
    """The task's repo at its start state with the gold patch applied."""
    (repo,) = (TASKSETS / name / "repos").iterdir()
    work = tmp / "repo"
    shutil.copytree(repo, work)
    git(work, "init", "-q")
    for patch in (task.start.bug_patch, task.gold_patch):
        subprocess.run(["git", "apply"], input=patch, text=True, cwd=work, check=True)
    return work


def plant(work: Path, writer: CopyWriter, task: Task, seed: int) -> Copies:
    """The writer's copies of the task's FAIL_TO_PASS tests, written into `work`."""
    files = {str(p.relative_to(work)): p.read_text() for p in sorted(work.rglob("*"))
             if p.is_file() and ".git" not in p.parts and any(p.match(g.split(")")[-1].removeprefix("**/"))
                                                               for g in writer.globs)}
    copies = writer.plan(files, list(task.FAIL_TO_PASS), [*task.FAIL_TO_PASS, *task.PASS_TO_PASS], random.Random(seed))
    for path, text in copies.files.items():
        (work / path).write_text(text)
    return copies


def run(work: Path, image: str, command: str, reader: str, who: str) -> object:
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", "--label", f"factory.test=copies-{who}",
                           "-v", f"{work}:/w", "-w", "/w", image, "sh", "-c", command],
                          capture_output=True, text=True, timeout=900)
    return read(reader, done.stdout, exit_code=done.returncode)


def check(results, task: Task, copies: Copies) -> None:
    """Every original passes under its new name; every copy fails."""
    for test_id in [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]:
        reported = copies.renamed.get(test_id, test_id)
        assert status_of(results, reported)[0] is TestStatus.passed, (test_id, reported)
    for copy, original in copies.copies.items():
        assert status_of(results, copy)[0] is TestStatus.failed, (copy, original)
