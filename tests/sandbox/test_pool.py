"""The warm pool: containers ahead of need, bounded by max_live, all removed at close."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from factory.config import SandboxConfig
from factory.records import StartState
from factory.sandbox.docker import engine
from factory.sandbox.pool import SandboxPool
from tests.conftest import BASE_IMAGE

pytestmark = pytest.mark.docker


def live(docker_client, run_id: str) -> int:
    # the low-level list: no per-container inspect that others' removals could break
    return len(docker_client.api.containers(filters={"label": f"{engine.LABEL_RUN}={run_id}"}))


def unique(name: str) -> str:
    """A run id of this test invocation alone, so other Docker work on the engine is not counted."""
    return f"{name}-{uuid.uuid4().hex[:8]}"


async def wait_for(predicate, seconds: float = 30) -> None:
    for _ in range(int(seconds * 10)):
        if predicate():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("condition not reached")


async def test_prewarmed_containers_are_used_and_max_live_is_respected(docker_client):
    config = SandboxConfig(max_live=3, warm=2, create_rate=20)
    run_id = unique("pool-test")
    async with SandboxPool(config, run_id=run_id) as pool:
        pool.prewarm(BASE_IMAGE, workdir="/tmp")
        await wait_for(lambda: len(pool.warm[(BASE_IMAGE, "/tmp")]) == 2)
        warm_ids = {s.container.id for s in pool.warm[(BASE_IMAGE, "/tmp")]}
        first = await pool.acquire(BASE_IMAGE, StartState(), workdir="/tmp", attempt_id="a1")
        assert first.container.id in warm_ids
        assert (await first.exec("git log --oneline | wc -l")).output.strip() == "1"

        # 2 more (one warm, one new) reach max_live; a 4th waits until one is released
        second = await pool.acquire(BASE_IMAGE, StartState(), workdir="/tmp", attempt_id="a2")
        third = await pool.acquire(BASE_IMAGE, StartState(), workdir="/tmp", attempt_id="a3")
        assert live(docker_client, run_id) == 3
        fourth = asyncio.create_task(pool.acquire(BASE_IMAGE, StartState(), workdir="/tmp", attempt_id="a4"))
        await asyncio.sleep(1)
        assert not fourth.done()
        await pool.release(second)
        sandbox = await asyncio.wait_for(fourth, 60)
        assert live(docker_client, run_id) == 3
        pool.prewarm(BASE_IMAGE, workdir="/tmp")  # no free slot: nothing is started
        await asyncio.sleep(0.5)
        assert live(docker_client, run_id) == 3
        del first, third, sandbox
    assert live(docker_client, run_id) == 0


async def test_warm_containers_of_another_image_give_way(docker_client):
    config = SandboxConfig(max_live=2, warm=2, create_rate=20)
    run_id = unique("pool-evict")
    async with SandboxPool(config, run_id=run_id) as pool:
        pool.prewarm(BASE_IMAGE, workdir="/")
        await wait_for(lambda: len(pool.warm[(BASE_IMAGE, "/")]) == 2)
        sandbox = await asyncio.wait_for(
            pool.acquire(BASE_IMAGE, StartState(), workdir="/tmp", attempt_id="b1"), 60
        )
        assert sandbox.workdir == "/tmp"
        assert live(docker_client, run_id) == 2
    assert live(docker_client, run_id) == 0


async def test_a_warm_container_removed_by_someone_else_is_replaced(docker_client):
    config = SandboxConfig(max_live=1, warm=1, create_rate=20)  # the vanished one's slot must be freed
    run_id = unique("pool-gone")
    async with SandboxPool(config, run_id=run_id) as pool:
        pool.prewarm(BASE_IMAGE, workdir="/tmp")
        await wait_for(lambda: len(pool.warm[(BASE_IMAGE, "/tmp")]) == 1)
        gone = pool.warm[(BASE_IMAGE, "/tmp")][0].container.id
        docker_client.api.remove_container(gone, force=True)
        sandbox = await asyncio.wait_for(
            pool.acquire(BASE_IMAGE, StartState(), workdir="/tmp", attempt_id="c1"), 60
        )
        assert sandbox.container.id != gone
        assert (await sandbox.exec("git log --oneline | wc -l")).output.strip() == "1"
        assert live(docker_client, run_id) == 1
    assert live(docker_client, run_id) == 0


async def test_a_sandbox_released_in_background_frees_its_slot_once_gone_and_close_waits_for_it(docker_client):
    config = SandboxConfig(max_live=1, warm=0, create_rate=20)
    run_id = unique("pool-background")
    async with SandboxPool(config, run_id=run_id) as pool:
        first = await pool.acquire(BASE_IMAGE, StartState(), workdir="/tmp", attempt_id="b1")
        pool.release_in_background(first)  # returns at once: the caller goes on to verify
        assert pool.removing and live(docker_client, run_id) == 1
        second = await asyncio.wait_for(pool.acquire(BASE_IMAGE, StartState(), workdir="/tmp", attempt_id="b2"), 60)
        assert live(docker_client, run_id) == 1  # the slot came back only when the first was gone
        pool.release_in_background(second)
    assert live(docker_client, run_id) == 0 and not pool.removing  # close waited for the removal
