"""A verification identical to one done or under way reuses its verdict (`DockerVerifier(reuse=True)`).

Containers are counted from the engine's own events, by the verifier's run label."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from factory.config import VerifierConfig
from factory.errors import VerifyError
from factory.records import FlagKind, StartState, Task, VerdictFlag
from factory.verify.verifier import REUSED, DockerVerifier, verification_key
from tests.verify.test_infra import Remover

pytestmark = pytest.mark.docker


class Counted:
    """A reusing verifier of its own run label, and the containers the engine made under that label."""

    def __init__(self, docker_client, reuse: bool = True, retries: int = 2, ahead: int = 16):
        self.client, self.since = docker_client, time.time()
        self.run_id = f"verify-reuse-{uuid.uuid4().hex[:8]}"
        config = VerifierConfig(timeout=20, memory="512m", infra_retries=retries, retry_wait=0.1, ahead=ahead)
        self.verifier = DockerVerifier(config, run_id=self.run_id, reuse=reuse)

    def containers(self, action: str = "create") -> int:
        """How many of the label's containers the engine sent an event for whose action starts with `action`."""
        events = self.client.events(since=self.since - 1, until=time.time(), decode=True, filters={
            "type": "container", "label": f"factory.run={self.run_id}"})
        return len({e["id"] for e in events if e["Action"].startswith(action)})

    async def running(self, count: int) -> None:
        """Wait until `count` of the label's containers run commands: their sandboxes are made, and
        a cancelled verification closes them (one cancelled while the engine makes it would leak)."""
        for _ in range(200):
            if self.containers("exec_start") >= count:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"fewer than {count} containers running commands")


def _plain(verdict):
    return verdict.model_dump(exclude={"seconds", "flags"}), [f for f in verdict.flags if f != REUSED]


async def test_an_identical_patch_is_verified_once_and_a_different_one_again(toy_task, make_patch, docker_client):
    counted = Counted(docker_client)
    first = await counted.verifier.verify(toy_task, toy_task.gold_patch)
    twin_task = toy_task.model_copy(update={"instance_id": "toy__other.name", "source": "elsewhere"})
    second = await counted.verifier.verify(twin_task, toy_task.gold_patch)  # the key is content, not ids
    assert counted.containers() == 1
    assert first.resolved and REUSED not in first.flags
    assert REUSED in second.flags and _plain(second) == _plain(first)  # one container: nothing run again
    second.tests.clear()
    second.flags.append(VerdictFlag(kind=FlagKind.other, detail="changed by its attempt"))
    third = await counted.verifier.verify(toy_task, toy_task.gold_patch)
    assert third.tests == first.tests and third.flags == [*first.flags, REUSED]  # nothing shared was changed

    other = await counted.verifier.verify(toy_task, make_patch({"toy/extra.py": "X = 1\n"}, fix=True))
    assert other.resolved and REUSED not in other.flags
    assert counted.containers() == 2


async def test_concurrent_identical_requests_share_one_verification(toy_task, docker_client):
    counted = Counted(docker_client)
    verdicts = await asyncio.gather(*(counted.verifier.verify(toy_task, toy_task.gold_patch) for _ in range(3)))
    assert counted.containers() == 1
    assert all(v.resolved for v in verdicts)
    assert sorted(REUSED in v.flags for v in verdicts) == [False, True, True]
    assert len({id(v) for v in verdicts}) == 3


async def test_without_reuse_every_request_is_verified(toy_task, docker_client):
    """Validation's repeats and the benches' rounds must each run."""
    counted = Counted(docker_client, reuse=False)
    verdicts = [await counted.verifier.verify(toy_task, toy_task.gold_patch) for _ in range(2)]
    assert counted.containers() == 2 and not any(REUSED in v.flags for v in verdicts)


async def test_an_infrastructure_failure_is_not_reused(toy_task, docker_client):
    counted = Counted(docker_client, retries=0)
    with Remover(docker_client, counted.run_id, count=1), pytest.raises(VerifyError):
        await counted.verifier.verify(toy_task, toy_task.gold_patch)
    verdict = await counted.verifier.verify(toy_task, toy_task.gold_patch)
    assert verdict.resolved and REUSED not in verdict.flags
    assert counted.containers() == 2


async def test_a_cancelled_waiter_leaves_the_verification_to_the_others(toy_task, make_patch, docker_client):
    counted = Counted(docker_client)
    first = asyncio.ensure_future(counted.verifier.verify(toy_task, toy_task.gold_patch))
    second = asyncio.ensure_future(counted.verifier.verify(toy_task, toy_task.gold_patch))
    await counted.running(1)
    first.cancel()
    verdict = await second
    assert first.cancelled() and verdict.resolved and REUSED in verdict.flags
    assert counted.containers() == 1

    # the last waiter gone, the verification goes too, and is not kept
    alone = asyncio.ensure_future(counted.verifier.verify(toy_task, make_patch({"toy/extra.py": "X = 2\n"}, fix=True)))
    await counted.running(2)
    alone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await alone
    again = await counted.verifier.verify(toy_task, make_patch({"toy/extra.py": "X = 2\n"}, fix=True))
    assert again.resolved and REUSED not in again.flags
    assert counted.containers() == 3


BASE = Task(instance_id="a", repo="r", problem_statement="p", image="img", gold_patch="g", test_patch="t",
            FAIL_TO_PASS=["t.py::a"], PASS_TO_PASS=["t.py::b"], start=StartState(bug_patch="b"))


@pytest.mark.parametrize("update", [{"instance_id": "b"}, {"repo": "other"}, {"source": "s"}, {"alt_fixes": ["x"]}])
def test_the_key_leaves_out_what_no_verification_reads(update):
    assert verification_key(BASE.model_copy(update=update), "diff") == verification_key(BASE, "diff")


@pytest.mark.parametrize("update", [
    {"image": "img2"}, {"workdir": "/repo"}, {"start": StartState(bug_patch="b2")},
    {"start": StartState(bug_patch="b", base_commit="abc")}, {"start": StartState(bug_patch="b", hide_paths=["t.py"])},
    {"test_patch": "t2"}, {"FAIL_TO_PASS": ["t.py::c"]}, {"PASS_TO_PASS": []}, {"test_cmd": "conda activate x"},
    {"test_seconds": 3.0}, {"fails_at": {"t.py::a": 1}}, {"gold_patch": "g2"}, {"problem_statement": "q"},
])
def test_the_key_holds_every_verification_input(update):
    assert verification_key(BASE.model_copy(update=update), "diff") != verification_key(BASE, "diff")
    assert verification_key(BASE, "diff2") != verification_key(BASE, "diff")
