"""Verification containers started while their attempts sample (`factory.verify.ahead`).

Containers are counted from the engine's own events, by the verifier's run label (`Counted`)."""

from __future__ import annotations

import asyncio
import time

import pytest

from factory.verify.verifier import REUSED
from tests.verify.test_infra import Remover
from tests.verify.test_reuse import Counted

pytestmark = pytest.mark.docker


async def settled(counted: Counted, action: str, count: int) -> None:
    """Wait until `count` of the label's containers had an event `action` (the engine is asynchronous)."""
    for _ in range(200):
        if counted.containers(action) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"fewer than {count} containers had {action!r}")


def live(counted: Counted) -> list:
    return counted.client.api.containers(all=True, filters={"label": f"factory.run={counted.run_id}"})


async def test_the_container_started_ahead_is_the_one_the_verification_uses(toy_task, docker_client):
    counted = Counted(docker_client, reuse=False)
    counted.verifier.expect(toy_task)
    await counted.running(1)  # started and at the start state before there is any patch
    before = time.time()
    verdict = await counted.verifier.verify(toy_task, toy_task.gold_patch)
    assert verdict.resolved, verdict.detail
    await settled(counted, "create", 1)
    created = [e for e in counted.client.events(since=counted.since - 1, until=time.time(), decode=True, filters={
        "type": "container", "label": f"factory.run={counted.run_id}"}) if e["Action"] == "create"]
    assert len(created) == 1 and created[0]["time"] <= before  # no second container, the first made ahead
    await counted.verifier.close()
    assert live(counted) == []


async def test_a_verification_without_a_container_ahead_starts_its_own(toy_task, docker_client):
    counted = Counted(docker_client, reuse=False, ahead=0)
    counted.verifier.expect(toy_task)  # ahead 0: nothing starts
    await asyncio.sleep(0.5)
    assert counted.containers() == 0
    verdict = await counted.verifier.verify(toy_task, toy_task.gold_patch)
    assert verdict.resolved and counted.containers() == 1


async def test_at_most_ahead_containers_wait_and_unexpected_ones_are_removed(toy_task, docker_client):
    counted = Counted(docker_client, reuse=False, ahead=2)
    others = [toy_task.model_copy(update={"instance_id": f"toy__clamp.copy{i}"}) for i in range(3)]
    for task in others:
        counted.verifier.expect(task)
    await counted.running(2)
    await asyncio.sleep(0.5)
    assert counted.containers() == 2  # the third attempt's verification starts its own when it comes
    counted.verifier.unexpect(others[0])  # its attempt ended with nothing to verify
    await settled(counted, "destroy", 1)
    assert len(live(counted)) == 1
    await counted.verifier.close()  # the run ends: what waits is removed
    await settled(counted, "destroy", 2)
    assert live(counted) == []


async def test_a_container_ahead_that_vanished_costs_a_fresh_start_not_the_verdict(toy_task, docker_client):
    counted = Counted(docker_client, reuse=False, retries=0)  # no infrastructure retry to lean on
    with Remover(docker_client, counted.run_id, count=1) as remover:
        counted.verifier.expect(toy_task)
        await settled(counted, "destroy", 1)  # `factory clean --all`, a user, the engine
    assert len(remover.removed) == 1
    verdict = await counted.verifier.verify(toy_task, toy_task.gold_patch)
    assert verdict.resolved, verdict.detail
    assert counted.containers() == 2


async def test_a_reused_verdict_lets_its_container_ahead_go(toy_task, docker_client):
    counted = Counted(docker_client)
    counted.verifier.expect(toy_task)
    counted.verifier.expect(toy_task)  # two attempts of one task sample
    await counted.running(2)
    first = await counted.verifier.verify(toy_task, toy_task.gold_patch)
    second = await counted.verifier.verify(toy_task, toy_task.gold_patch)  # the same patch: no tests run
    assert first.resolved and REUSED in second.flags
    await settled(counted, "destroy", 2)  # the one used, and the one no verification will take
    assert live(counted) == []
