"""Cleanup under concurrency: containers of dead owners go, those of live processes stay."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import docker
import pytest

from factory.sandbox.docker import engine
from tests.conftest import BASE_IMAGE, dead_owner_labels

pytestmark = pytest.mark.docker


@pytest.fixture
def new_run_id():
    """Run ids of this test invocation alone; their containers are removed afterwards."""
    made: list[str] = []

    def make(name: str) -> str:
        made.append(f"{name}-{uuid.uuid4().hex[:8]}")
        return made[-1]

    yield make
    for run_id in made:
        engine.remove_containers(run_id=run_id, everything=True)


def start(docker_client, labels: dict[str, str]) -> str:
    container = docker_client.containers.run(
        BASE_IMAGE, ["sleep", "600"], detach=True, labels=labels, network_mode="none"
    )
    return container.id


def ids_of(docker_client, run_id: str) -> set[str]:
    # the low-level list: no per-container inspect that others' removals could break
    found = docker_client.api.containers(all=True, filters={"label": f"{engine.LABEL_RUN}={run_id}"})
    return {c["Id"] for c in found}


def test_clean_exits_0_while_others_remove_the_same_containers(docker_client, new_run_id):
    run_id = new_run_id("race")
    owner = dead_owner_labels(run_id)
    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(lambda i: start(docker_client, {**owner, engine.LABEL_ATTEMPT: f"a{i}"}), range(20)))

    def remove_from_the_other_end() -> None:
        # start when a clean is at work (others are listing then), from the end it starts at
        while len(ids_of(docker_client, run_id)) == len(ids) and any(c.poll() is None for c in cleans):
            time.sleep(0.01)
        newest_first = [c["Id"] for c in docker_client.api.containers(
            all=True, filters={"label": f"{engine.LABEL_RUN}={run_id}"})]
        for container_id in reversed(newest_first):  # the cleans go newest first
            with contextlib.suppress(docker.errors.APIError):  # a clean got there first (404, 409)
                docker_client.api.remove_container(container_id, force=True)

    # three cleans and a remover over the same containers: listing, inspecting and removing race
    cleans = [
        subprocess.Popen([sys.executable, "-m", "factory.cli", "clean"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    remover = threading.Thread(target=remove_from_the_other_end)
    remover.start()
    results = [(proc, *proc.communicate(timeout=300)) for proc in cleans]
    remover.join()
    for proc, out, err in results:
        assert proc.returncode == 0, err
        assert "Traceback" not in err
        assert re.search(r"removed \d+ container\(s\)", out), out
    assert ids_of(docker_client, run_id) == set()


def test_a_live_pid_with_another_start_time_is_a_dead_owner(docker_client, new_run_id):
    run_id = new_run_id("reused-pid")
    mine = engine.labels(run_id, "mine")
    assert mine[engine.LABEL_PID] == str(os.getpid())
    reused = {**mine, engine.LABEL_ATTEMPT: "reused",
              engine.LABEL_PID_START: str(int(mine[engine.LABEL_PID_START]) + 1)}
    older = {k: v for k, v in mine.items() if k != engine.LABEL_PID_START}  # labelled before start times
    kept = {start(docker_client, mine), start(docker_client, older)}
    start(docker_client, reused)
    assert engine.reap_run(run_id) == 1
    assert ids_of(docker_client, run_id) == kept


def test_reap_run_spares_a_live_process_of_the_same_run(docker_client, new_run_id):
    run_id = new_run_id("shared-run")
    script = (
        "import asyncio, sys\n"
        "from factory.config import SandboxConfig\n"
        "from factory.sandbox.docker import DockerSandbox\n"
        "async def main():\n"
        f"    sb = await DockerSandbox.create({BASE_IMAGE!r}, SandboxConfig(), workdir='/', run_id={run_id!r})\n"
        "    print(sb.container.id, flush=True)\n"
        "    await asyncio.to_thread(sys.stdin.readline)  # alive until the test is done\n"
        "    await sb.close()\n"
        "asyncio.run(main())\n"
    )
    other = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        theirs = other.stdout.readline().strip()
        assert theirs, "the other process created no container"
        start(docker_client, dead_owner_labels(run_id))  # a crashed process's leftover
        assert engine.reap_run(run_id) == 1
        assert ids_of(docker_client, run_id) == {theirs}

        os.kill(other.pid, signal.SIGKILL)  # now it is dead: its container is a leftover too
        other.wait(timeout=60)
        assert engine.reap_run(run_id) == 1
        assert ids_of(docker_client, run_id) == set()
    finally:
        other.kill()
        other.wait()
