"""A fault inside one attempt becomes a recorded status; the run goes on."""

from __future__ import annotations

import pytest

from factory.config import load_pipeline
from factory.executor.local import LocalExecutor
from factory.protocols import Verifier
from factory.run.folder import RunStore
from factory.run.parts import plan_of
from factory.run.progress import QuietProgress
from factory.run.runner import load_run_tasks
from factory.run.scheduler import Scheduler
from factory.sandbox.pool import SandboxPool
from factory.teachers import build_teacher
from tests.test_run import pipeline_file

pytestmark = pytest.mark.docker


class BrokenVerifier(Verifier):
    """Stands for a bug in a stage: every verification raises."""

    async def verify(self, task, patch):
        raise RuntimeError("verifier bug")


async def test_an_unexpected_error_is_recorded_and_the_run_goes_on(tmp_path, docker_client):
    pipeline = load_pipeline(pipeline_file(tmp_path, tasks=2, attempts=1))
    tasks, _ = load_run_tasks(pipeline)
    store = RunStore(tmp_path / "runs" / "faulty")
    store.start("", "test", "test")
    teacher = build_teacher(pipeline.teachers[0])
    async with SandboxPool(pipeline.sandbox, run_id="faulty") as pool:
        teachers = {"scripted-test": teacher}
        result = await Scheduler(plan_of(pipeline), tasks, teachers, store, progress=QuietProgress(),
                                 executor=LocalExecutor(pool, BrokenVerifier(), teachers, pipeline.agent)).run()
    attempts = store.attempts()
    assert result.finished == 2 and len(attempts) == 2
    assert {a.error_class for a in attempts} == {"internal:RuntimeError"}
    assert all("verifier bug" in a.infra_failures[-1] for a in attempts)
