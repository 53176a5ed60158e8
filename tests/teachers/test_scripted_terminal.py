"""The scripted teacher on terminal tasks (Harbor): each outcome played through the real agent
loop in a real sandbox of the task, frozen and judged by the real final-state verifier."""

from __future__ import annotations

import json

import pytest

from factory.agent import run_agent
from factory.config import AgentConfig
from factory.records import Exit, StartState, Task
from factory.sandbox.backend import sandbox_backend
from factory.sandbox.config import SandboxConfig
from factory.teachers.playbook import Outcome
from factory.teachers.scripted import ScriptedConfig, ScriptedProfile, ScriptedTeacher
from factory.teachers.terminal_playbook import solution_command
from factory.verify import DockerVerifier
from tests.terminal_sets import DEMO_TERMINAL, built_tasks

pytestmark = pytest.mark.docker
RUN = "test-scripted-terminal"


@pytest.fixture(scope="module")
def tasks(docker_client) -> dict[str, Task]:
    return built_tasks(DEMO_TERMINAL)


def only(outcome: Outcome) -> ScriptedTeacher:
    rates = {k.value: float(k is outcome) for k in Outcome if k is not Outcome.wander}
    return ScriptedTeacher(ScriptedConfig(profile=ScriptedProfile(**rates, parallel_calls=0)))


async def attempt(task: Task, outcome: Outcome):
    """An attempt of `outcome` in the sandbox a pipeline gives the agent, and the verdict on its final state."""
    backend = sandbox_backend("docker")
    sandbox = await backend.create(task.image, SandboxConfig().for_terminal(task.terminal), workdir=task.workdir, run_id=RUN,
                                   attempt_id=task.instance_id)
    try:
        await sandbox.prepare(StartState())
        trajectory = await run_agent(task, only(outcome), sandbox, AgentConfig(max_turns=20))
        state = await backend.freeze(sandbox, RUN, task.instance_id)
    finally:
        await sandbox.close()
    return trajectory, await DockerVerifier(run_id=RUN).verify(task, "", state)


@pytest.mark.parametrize("name", ["repair-json", "build-zipapp", "configure-service", "summarize-sales",
                                  "recover-branch", "fix-rotate-script", "serve-status"])
async def test_solve_runs_the_solution_commands_and_earns_the_reward(tasks, name):
    trajectory, verdict = await attempt(tasks[name], Outcome.solve)
    commands = [json.loads(c.arguments).get("command") for m in trajectory.messages for c in m.tool_calls]
    assert solution_command(tasks[name]) in commands and trajectory.exit is Exit.submitted
    assert verdict.resolved and verdict.reward == 1.0, verdict.detail


@pytest.mark.parametrize(("name", "outcome"), [("repair-json", Outcome.wrong_fix), ("repair-json", Outcome.give_up),
                                                ("serve-status", Outcome.wrong_fix)])
async def test_wrong_fix_and_give_up_earn_nothing(tasks, name, outcome):
    trajectory, verdict = await attempt(tasks[name], outcome)
    commands = [json.loads(c.arguments).get("command", "") for m in trajectory.messages for c in m.tool_calls]
    assert solution_command(tasks[name]) not in commands
    assert not verdict.resolved and verdict.reward == 0.0, verdict.detail
