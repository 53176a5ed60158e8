"""The scripted teacher in Go, JavaScript, Java and Rust tasks, as in Python's: a whole attempt in
a real sandbox of the task's image, checked with the task's own test command (never pytest), and
judged by the real verifier: a solve resolves the task, a wrong fix does not."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from factory.agent import run_agent
from factory.agent.toolchain import REPORT_DIR, agent_test_command
from factory.config import AgentConfig, SandboxConfig, VerifierConfig
from factory.records import Exit, Task
from factory.sandbox.docker import DockerSandbox
from factory.sandbox.images import ensure_images
from factory.tasks import load_taskset
from factory.teachers.playbook import Outcome
from factory.verify.verifier import DockerVerifier
from tests.teachers.test_scripted import only

pytestmark = pytest.mark.docker

TASKSETS = Path(__file__).parents[2] / "pipelines" / "tasksets"
FOLDERS = {"go": "demo-go", "javascript": "demo-js", "java": "demo-java", "rust": "demo-rust"}
CONFIG = AgentConfig(max_turns=30, command_timeout=120)


@pytest.fixture
async def sandboxes(docker_client) -> AsyncIterator[Callable]:
    made: list[DockerSandbox] = []

    async def make(task: Task) -> DockerSandbox:
        sandbox = await DockerSandbox.create(task.image, SandboxConfig(), workdir=task.workdir,
                                             run_id="test-scripted-languages")
        made.append(sandbox)
        await sandbox.prepare(task.start)
        return sandbox

    yield make
    for sandbox in made:
        await sandbox.close()


def first_task(language: str) -> Task:
    folder = TASKSETS / FOLDERS[language]
    task = load_taskset(str(folder), skip_invalid=False).tasks[0]
    ensure_images([task], folder)
    return task


def commands(messages) -> list[str]:
    return [json.loads(c.arguments)["command"] for m in messages for c in m.tool_calls if c.name == "bash"]


@pytest.mark.parametrize("language", sorted(FOLDERS))
async def test_a_solve_checks_with_the_tasks_command_and_resolves_a_wrong_fix_does_not(language, sandboxes):
    task = first_task(language)
    verifier = DockerVerifier(VerifierConfig(timeout=300))
    seen: dict[Outcome, bool] = {}
    for outcome in (Outcome.solve, Outcome.wrong_fix):
        sandbox = await sandboxes(task)
        # seed 1: its plan checks the fix (a wrong fix checks half of the time)
        trajectory = await run_agent(task, only(outcome), sandbox, CONFIG, attempt_seed=1)
        assert trajectory.exit is Exit.submitted and trajectory.patch, trajectory.error
        ran = commands(trajectory.messages)
        assert not any("pytest" in c or c.startswith("python") for c in ran)
        checks = [c for c in ran if c.startswith(agent_test_command(task))]
        if outcome is Outcome.solve:
            assert checks, ran
            results = [m.content for m in trajectory.messages if m.role == "tool"]
            assert not any("Permission denied" in r or "command not found" in r for r in results), results
        seen[outcome] = (await verifier.verify(task, trajectory.patch)).resolved
    assert seen == {Outcome.solve: True, Outcome.wrong_fix: False}


async def test_a_command_that_writes_to_report_dir_writes_where_the_agent_can_read_it(sandboxes):
    task = first_task("javascript")
    sandbox = await sandboxes(task)
    trajectory = await run_agent(task, only(Outcome.solve), sandbox, CONFIG, attempt_seed=1)
    assert trajectory.exit is Exit.submitted
    report = await sandbox.exec(f"cat {REPORT_DIR}/{task.tests.report}", timeout=30)
    assert report.exit_code == 0 and json.loads(report.output)["stats"]["failures"] == 0
