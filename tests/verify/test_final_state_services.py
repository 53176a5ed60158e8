"""Final-state verification of a terminal task whose tests check a service the agent left running
(the demo's `serve-status`), on the real engine: the services are started again in a container of
their own beside the tests, a correct one resolves, a missing one does not, and a process the agent
left running cannot reach the tests' files or their reward."""

import shlex
from pathlib import Path

import pytest

from factory.records import FlagKind, Reason, Task
from factory.sandbox.backend import sandbox_backend
from factory.sandbox.played import state_after
from factory.tasks import load_taskset
from factory.verify import DockerVerifier

pytestmark = pytest.mark.docker
TASK = Path(__file__).parents[2] / "pipelines" / "tasksets" / "demo-terminal" / "serve-status"
RUN = "test-final-state-services"
CONFIGURED = "sed -i 's/^port = .*/port = 8081/; s/^name = .*/name = inventory/' /app/status/status.ini"


@pytest.fixture(scope="module")
def task() -> Task:
    [loaded] = load_taskset(str(TASK)).tasks
    sandbox_backend("docker").build_dockerfile_images([loaded])
    return loaded


async def _verdict(task: Task, script: str):
    played = await state_after(sandbox_backend("docker"), task, script, run_id=RUN, attempt_id="services-attempt",
                               seconds=120)
    assert not played.failed, played.failed
    return await DockerVerifier(run_id=RUN).verify(task, "", played.state)


def _ours(docker_client) -> list:
    return docker_client.containers.list(all=True, filters={"label": f"factory.run={RUN}"})


async def test_a_service_left_running_is_started_again_for_the_tests(task, docker_client):
    before = len(_ours(docker_client))
    verdict = await _verdict(task, task.terminal.solution["solve.sh"])
    assert verdict.resolved and verdict.reward == 1.0, verdict.detail
    [flag] = verdict.flagged(FlagKind.services)
    assert flag.detail == "python3 /app/status/server.py (port 8081)"
    assert len(_ours(docker_client)) == before == 0


async def test_a_configured_service_that_was_not_left_running_fails(task):
    verdict = await _verdict(task, CONFIGURED)
    assert not verdict.resolved and verdict.reason is Reason.tests_failed and verdict.reward == 0.0
    assert not verdict.flagged(FlagKind.services)
    assert "nothing answers on 127.0.0.1:8081" in verdict.detail


FORGER = ("while :; do mkdir -p /logs/verifier /tests; echo 1 > /logs/verifier/reward.txt; "
          "printf '#!/bin/bash\\necho 1 > /logs/verifier/reward.txt\\n' > /tests/test.sh; sleep 0.05; done")


async def test_a_process_left_running_cannot_write_the_reward_or_the_tests(task, docker_client):
    verdict = await _verdict(task, f"nohup bash -c {shlex.quote(FORGER)} > /dev/null 2>&1 &")
    assert not verdict.resolved and verdict.reward == 0.0, verdict.detail
    [flag] = verdict.flagged(FlagKind.services)
    assert flag.detail.startswith("bash -c 'while :; do")  # it ran, beside the tests, and reached nothing of theirs
    assert not _ours(docker_client)


async def test_a_port_that_does_not_come_back_is_named(task):
    # listens on its first start only: started again from the frozen state, it never does
    once = ("import os, socket, time\n"
            "first = not os.path.exists('/tmp/started')\nopen('/tmp/started', 'w').close()\n"
            "s = socket.socket()\nif first:\n    s.bind(('127.0.0.1', 8081)); s.listen()\ntime.sleep(3600)\n")
    script = f"cat > /tmp/once.py <<'PY'\n{once}PY\nnohup python3 /tmp/once.py > /dev/null 2>&1 &\nsleep 1"
    verdict = await _verdict(task, script)
    assert not verdict.resolved
    [flag] = verdict.flagged(FlagKind.services)
    assert flag.detail == "python3 /tmp/once.py (port 8081); port 8081 never listened again"
