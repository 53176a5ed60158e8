"""A container start cancelled while the engine is at it leaves nothing behind.

The engine's answer to the request that makes the container (its create, or its start) is held
back (`HeldEngine`) until the engine has made it; then the caller is cancelled, the answer let
go, and the run's containers counted on the real engine: none.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid

import pytest

from factory.config import SandboxConfig
from factory.records import StartState, Task
from factory.sandbox.docker import DockerSandbox, engine
from factory.verify import DockerVerifier
from tests.conftest import BASE_IMAGE
from tests.sandbox.held_engine import HeldEngine

pytestmark = pytest.mark.docker


@pytest.fixture
def held(tmp_path, monkeypatch, docker_client):
    """A HeldEngine maker; factory's client talks to it for the test, the real socket after."""
    made: list[HeldEngine] = []

    def hold(request: str, run_id: str) -> HeldEngine:
        made.append(HeldEngine(tmp_path, request, run_id).__enter__())
        monkeypatch.setenv("DOCKER_HOST", made[-1].url)
        engine.client.cache_clear()
        return made[-1]

    yield hold
    for proxy in made:
        proxy.__exit__()
    monkeypatch.undo()
    engine.client.cache_clear()


def containers_of(docker_client, run_id: str) -> list[dict]:
    return docker_client.api.containers(all=True, filters={"label": f"{engine.LABEL_RUN}={run_id}"})


def wait_for(docker_client, run_id: str, state: str) -> None:
    """Until the engine shows the run's container in `state` (it has made it; its answer is held)."""
    deadline = time.monotonic() + 60
    while not any(c["State"] == state for c in containers_of(docker_client, run_id)):
        assert time.monotonic() < deadline, f"the engine never showed a {state} container"
        time.sleep(0.05)


async def cancelled_while_held(docker_client, proxy: HeldEngine, run_id: str, state: str, start) -> None:
    starting = asyncio.ensure_future(start())
    await asyncio.to_thread(proxy.sent.wait, 60)
    await asyncio.to_thread(wait_for, docker_client, run_id, state)
    starting.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await starting
    proxy.release()
    await engine.settled()


@pytest.mark.parametrize(("request_held", "state"), [("create", "created"), ("start", "running")])
def test_a_sandbox_start_cancelled_while_the_engine_makes_it_leaves_no_container(docker_client, held, request_held,
                                                                                  state):
    run_id = f"cancelled-{uuid.uuid4().hex[:8]}"
    proxy = held(request_held, run_id)
    config = SandboxConfig(user="root")
    start = lambda: DockerSandbox.create(BASE_IMAGE, config, workdir="/", run_id=run_id)  # noqa: E731
    asyncio.run(cancelled_while_held(docker_client, proxy, run_id, state, start))
    assert containers_of(docker_client, run_id) == []


def test_a_verification_container_let_go_while_the_engine_creates_it_leaves_nothing(docker_client, held):
    """The race a run met: an attempt's verification container starts ahead (`expect`), and the
    attempt ends with nothing to verify (`unexpect`) while the engine still creates it."""
    run_id = f"ahead-{uuid.uuid4().hex[:8]}"
    proxy = held("create", run_id)
    task = Task(instance_id="t", repo="r", problem_statement="", image=BASE_IMAGE, workdir="/srv",
                start=StartState())

    async def scenario() -> None:
        verifier = DockerVerifier(run_id=run_id)
        verifier.expect(task)
        await asyncio.to_thread(proxy.sent.wait, 60)
        await asyncio.to_thread(wait_for, docker_client, run_id, "created")
        verifier.unexpect(task)
        await asyncio.sleep(0.2)  # the drop's cancel lands while the answer is held
        proxy.release()
        await verifier.close()
        await engine.settled()

    asyncio.run(scenario())
    assert containers_of(docker_client, run_id) == []
