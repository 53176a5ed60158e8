"""`agent.max_wall_seconds` bounds the whole attempt: sandbox start, the conversation and
verification. A start that passes it is infrastructure (`sandbox_error`, redone on resume), a
verification that passes it leaves the attempt `verify_error` (verified again on resume); what
came late is released, never leaked.

The engine is real; the slowness is put in front of the real pool and verifier.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from factory.config import load_pipeline, teacher_label
from factory.executor.local import LocalExecutor
from factory.protocols import Verifier
from factory.records import Exit
from factory.run.folder import RunStore
from factory.run.parts import plan_of
from factory.run.progress import QuietProgress
from factory.run.runner import load_run_tasks
from factory.run.scheduler import VERIFY_ERROR, Scheduler
from factory.sandbox.docker.engine import LABEL_RUN
from factory.sandbox.pool import SandboxPool
from factory.teachers import build_teacher
from factory.verify import DockerVerifier
from tests.test_run import pipeline_file

WALL = 25.0  # room for a scripted attempt on a loaded machine, which must end well before it
PAST = 2.0  # how far past the wall time the slow part does its real work


class SlowStartPool(SandboxPool):
    async def acquire(self, *args, **kwargs):
        await asyncio.sleep(WALL + PAST)
        return await super().acquire(*args, **kwargs)


class ClockedPool(SandboxPool):
    """Notes when the first sandbox was asked for: where the attempt's clock starts."""

    asked: float | None = None

    async def acquire(self, *args, **kwargs):
        ClockedPool.asked = ClockedPool.asked or time.monotonic()
        return await super().acquire(*args, **kwargs)


class SlowVerifier(Verifier):
    """Verifies for real, once the attempt's wall time has passed."""

    def __init__(self, inner: DockerVerifier):
        self.inner = inner

    async def verify(self, task, patch):
        assert ClockedPool.asked is not None
        await asyncio.sleep(ClockedPool.asked + WALL + PAST - time.monotonic())
        return await self.inner.verify(task, patch)


async def one_attempt(tmp_path: Path, run_id: str, *, pool_type=SandboxPool, slow_verify: bool = False):
    path = pipeline_file(tmp_path, tasks=1, attempts=1, stop=1, in_flight=1)
    path.write_text(path.read_text().replace("agent:\n", f"agent:\n  max_wall_seconds: {WALL}\n")
                    .replace("sampling:\n", "sampling:\n  infra_retries: 0\n"))
    pipeline = load_pipeline(path)
    tasks, _ = load_run_tasks(pipeline)
    store = RunStore(tmp_path / "runs" / run_id)
    store.start("", "test", "test")
    verifier = DockerVerifier(pipeline.verifier, pipeline.sandbox, run_id=run_id)
    teachers = {teacher_label(t): build_teacher(t) for t in pipeline.teachers}
    async with pool_type(pipeline.sandbox, run_id=run_id) as pool:
        executor = LocalExecutor(pool, SlowVerifier(verifier) if slow_verify else verifier, teachers, pipeline.agent)
        scheduler = Scheduler(plan_of(pipeline), tasks, teachers, store, executor=executor, progress=QuietProgress())
        result = await scheduler.run()
    [attempt] = result.attempts if result.attempts else store.attempts()
    return attempt


def leftovers(docker_client, run_id: str) -> list:
    return docker_client.api.containers(all=True, filters={"label": f"{LABEL_RUN}={run_id}"})  # no inspect each


@pytest.mark.docker
async def test_a_sandbox_start_past_the_wall_time_is_infrastructure_and_leaks_nothing(tmp_path, docker_client):
    attempt = await one_attempt(tmp_path, "slow-start", pool_type=SlowStartPool)
    assert attempt.trajectory.exit == Exit.sandbox_error and attempt.error_class == "sandbox_error"
    assert "within max_wall_seconds" in attempt.trajectory.error
    assert leftovers(docker_client, "slow-start") == []  # the sandbox that came late was removed


@pytest.mark.docker
async def test_a_verification_past_the_wall_time_is_left_for_a_resume(tmp_path, docker_client):
    attempt = await one_attempt(tmp_path, "slow-verify", pool_type=ClockedPool, slow_verify=True)
    assert attempt.trajectory.exit == Exit.submitted and attempt.verdict is None
    assert attempt.error_class == VERIFY_ERROR
    assert "max_wall_seconds" in attempt.infra_failures[-1]
    assert leftovers(docker_client, "slow-verify") == []
