"""Engine faults during verification are infrastructure: redone, never a verdict, never lost.

The fault is real: another party removes the verification containers from the engine while
they work (as a careless `docker rm -f` or another tool would).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import uuid

import docker
import pytest

from factory.config import VerifierConfig, load_pipeline
from factory.errors import VerifyError
from factory.executor.local import LocalExecutor
from factory.run.folder import RunStore
from factory.run.parts import plan_of
from factory.run.progress import QuietProgress
from factory.run.runner import load_run_tasks
from factory.run.scheduler import VERIFY_ERROR, Scheduler
from factory.sandbox.docker import engine
from factory.sandbox.pool import SandboxPool
from factory.teachers import build_teacher
from factory.verify.verifier import DockerVerifier
from tests.test_run import pipeline_file
from tests.verify.conftest import TOY

pytestmark = pytest.mark.docker


class Remover:
    """Removes the containers of one run label as they appear, the first `count` of them (None: all)."""

    def __init__(self, docker_client, run_id: str, count: int | None = None):
        self.api, self.run_id, self.count = docker_client.api, run_id, count
        self.removed: set[str] = set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stop.wait(0.05):
            for c in self.api.containers(filters={"label": f"{engine.LABEL_RUN}={self.run_id}"}):
                if c["Id"] in self.removed or (self.count is not None and len(self.removed) >= self.count):
                    continue
                self.removed.add(c["Id"])
                with contextlib.suppress(docker.errors.APIError):  # gone already is fine
                    self.api.remove_container(c["Id"], force=True)

    def __enter__(self) -> Remover:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()


def verifier(run_id: str, retries: int = 2) -> DockerVerifier:
    return DockerVerifier(VerifierConfig(timeout=120, infra_retries=retries, retry_wait=0.1), run_id=run_id)


async def test_a_verification_whose_container_is_removed_is_redone(toy_task, docker_client):
    run_id = f"verify-fault-{uuid.uuid4().hex[:8]}"
    with Remover(docker_client, run_id, count=2) as remover:
        verdict = await verifier(run_id).verify(toy_task, toy_task.gold_patch)
    assert len(remover.removed) == 2
    assert verdict.resolved, verdict


async def test_an_engine_that_keeps_failing_is_an_error_not_a_verdict(toy_task, docker_client):
    run_id = f"verify-fault-{uuid.uuid4().hex[:8]}"
    with Remover(docker_client, run_id) as remover, pytest.raises(VerifyError, match="infrastructure 2 times"):
        await verifier(run_id, retries=1).verify(toy_task, toy_task.gold_patch)
    assert len(remover.removed) == 2  # one container per try


class CountingTeacher:
    """The scripted teacher, counting the turns it is asked for (each would be paid for)."""

    def __init__(self, inner):
        self.inner, self.turns = inner, 0
        self.name, self.model, self.scripted = inner.name, inner.model, True

    def session(self, task, seed):
        session = self.inner.session(task, seed)
        outer = self

        class Counted:
            name, model, scripted = session.name, session.model, True

            async def complete(self, messages, tools):
                outer.turns += 1
                return await session.complete(messages, tools)

        return Counted()


async def test_a_resumed_run_verifies_what_infrastructure_left_unverified_without_sampling_again(tmp_path, docker_client):
    pipeline = load_pipeline(pipeline_file(tmp_path, tasks=2, attempts=1))
    tasks, _ = load_run_tasks(pipeline)
    store = RunStore(tmp_path / "runs" / "unverified")
    store.start("", "test", "test")
    run_id = f"verify-outage-{uuid.uuid4().hex[:8]}"

    async def run(teacher: CountingTeacher, verify_run: str):
        async with SandboxPool(pipeline.sandbox, run_id=f"{run_id}-sampling") as pool:
            teachers = {"scripted-test": teacher}
            executor = LocalExecutor(pool, verifier(verify_run, retries=1), teachers, pipeline.agent)
            return await Scheduler(plan_of(pipeline), tasks, teachers, store, executor=executor, progress=QuietProgress()).run()

    first = CountingTeacher(build_teacher(pipeline.teachers[0]))
    with Remover(docker_client, run_id):  # every verification container of the first run dies
        await run(first, run_id)
    unverified = store.attempts()
    assert len(unverified) == 2 and first.turns > 0
    assert {a.error_class for a in unverified} == {VERIFY_ERROR}
    assert all(a.trajectory and a.trajectory.patch and a.verdict is None for a in unverified)
    assert all("infrastructure" in a.infra_failures[-1] for a in unverified)

    second = CountingTeacher(build_teacher(pipeline.teachers[0]))
    result = await run(second, f"{run_id}-healthy")
    assert second.turns == 0  # nothing sampled, nothing paid: only verified
    verified = {a.key.instance_id: a for a in store.attempts()}
    assert result.finished == 2 and len(verified) == 2
    assert all(a.error_class is None and a.verdict and a.verdict.resolved for a in verified.values())
    for before in unverified:  # the very trajectories of the first run, now with their verdicts
        assert verified[before.key.instance_id].trajectory.messages == before.trajectory.messages


async def test_progress_and_results_count_a_reverified_attempt_once(tmp_path, docker_client):
    """Resuming twice changes nothing once every attempt has its verdict."""
    pipeline = load_pipeline(pipeline_file(tmp_path, tasks=1, attempts=1))
    tasks, _ = load_run_tasks(pipeline)
    store = RunStore(tmp_path / "runs" / "twice")
    store.start("", "test", "test")
    teacher = CountingTeacher(build_teacher(pipeline.teachers[0]))
    for _ in range(2):
        async with SandboxPool(pipeline.sandbox, run_id=f"twice-{uuid.uuid4().hex[:6]}") as pool:
            teachers = {"scripted-test": teacher}
            executor = LocalExecutor(pool, verifier(f"twice-{uuid.uuid4().hex[:6]}"), teachers, pipeline.agent)
            result = await Scheduler(plan_of(pipeline), tasks, teachers, store, executor=executor, progress=QuietProgress()).run()
    assert (result.resumed, result.finished, len(result.attempts)) == (1, 0, 1)


async def test_a_verification_container_killed_on_the_host_mid_run_is_redone(toy_task, make_patch, docker_client):
    """A host OOM killer or a dying shim kills the container's init with no `kill` the engine sees.
    The tests run as uid 1000, which cannot end root's init: such a death is the engine's, not the patch's."""
    run_id = f"verify-hostkill-{uuid.uuid4().hex[:8]}"
    patch = make_patch({"toy/__init__.py": (TOY / "toy/__init__.py").read_text() + "import time\ntime.sleep(4)\n"},
                       fix=True)
    killed: list[str] = []

    def kill_once() -> None:
        while not killed:
            for c in docker_client.api.containers(filters={"label": f"{engine.LABEL_RUN}={run_id}"}):
                top = docker_client.api.top(c["Id"]).get("Processes") or []
                if any("pytest" in " ".join(p) for p in top):  # the tests have started
                    os.kill(docker_client.api.inspect_container(c["Id"])["State"]["Pid"], signal.SIGKILL)
                    killed.append(c["Id"])
                    return
            time.sleep(0.2)

    thread = threading.Thread(target=kill_once, daemon=True)
    thread.start()
    verdict = await verifier(run_id).verify(toy_task, patch)
    thread.join(timeout=1)
    assert killed, "the container was never seen running the tests"
    assert verdict.resolved, verdict
