"""A terminal task's agent sandbox (`SandboxConfig.for_terminal`): the task's cpus, memory and
network bind it where they are tighter than the pipeline's, as the engine reports them on the running
container, and a process a command detached from its output runs on after the command."""

from __future__ import annotations

import pytest

from factory.config import SandboxConfig
from factory.records import StartState, TerminalSpec
from factory.sandbox.docker import engine
from factory.sandbox.pool import SandboxPool
from tests.conftest import BASE_IMAGE
from tests.sandbox.test_pool import unique

pytestmark = pytest.mark.docker
PIPELINE = SandboxConfig(memory="2g", cpus=1.0, network="bridge")


def limits(docker_client, run_id: str) -> tuple[int, int, str]:
    [found] = docker_client.api.containers(filters={"label": f"{engine.LABEL_RUN}={run_id}"})
    host = docker_client.api.inspect_container(found["Id"])["HostConfig"]
    return host["Memory"], host["NanoCpus"], host["NetworkMode"]


@pytest.mark.parametrize(("task", "expected"), [
    (TerminalSpec(cpus=0.5, memory_mb=512, network=False), (512 * 2**20, 500_000_000, "none")),
    # a task asks for more than the pipeline gives: the pipeline's limits stand
    (TerminalSpec(cpus=4, memory_mb=8192, network=True), (2 * 2**30, 1_000_000_000, "bridge")),
    (TerminalSpec(), (2 * 2**30, 1_000_000_000, "none")),  # no allow_internet: offline
])
async def test_the_agent_s_container_takes_the_tighter_of_the_task_s_and_the_pipeline_s_limits(docker_client, task,
                                                                                              expected):
    run_id = unique("terminal-limits")
    async with SandboxPool(PIPELINE, run_id=run_id) as pool:
        await pool.acquire(BASE_IMAGE, StartState(), workdir="/tmp", attempt_id="limits", terminal=task)
        assert limits(docker_client, run_id) == expected


def test_an_offline_pipeline_stays_offline_whatever_the_task_allows():
    assert SandboxConfig(network="none").for_terminal(TerminalSpec(network=True)).network == "none"


COMMANDS = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done"


@pytest.mark.parametrize("user", ["agent", "root"])
async def test_a_detached_process_runs_on_and_one_on_the_command_s_output_does_not(docker_client, user):
    async with SandboxPool(SandboxConfig(user=user), run_id=unique("terminal-detached")) as pool:
        sandbox = await pool.acquire(BASE_IMAGE, StartState(), workdir="/tmp", attempt_id="detached",
                                     terminal=TerminalSpec())
        assert (await sandbox.exec("nohup sleep 301 > /dev/null 2>&1 &")).exit_code == 0
        attached = await sandbox.exec("sleep 302 &", timeout=60)  # would hold the command open: killed, not waited for
        assert attached.exit_code == 0 and not attached.timed_out
        running = (await sandbox.exec(COMMANDS)).output
        assert "sleep 301" in running and "sleep 302" not in running


async def test_a_swe_task_s_sandbox_still_kills_whatever_a_command_leaves():
    async with SandboxPool(SandboxConfig(), run_id=unique("swe-detached")) as pool:
        sandbox = await pool.acquire(BASE_IMAGE, StartState(), workdir="/tmp", attempt_id="detached")
        await sandbox.exec("nohup sleep 301 > /dev/null 2>&1 &")
        assert "sleep 301" not in (await sandbox.exec(COMMANDS)).output
