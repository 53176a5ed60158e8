"""The local executor: an attempt's sandbox from this process's warm pool, the agent loop here,
verification against this machine's engine. A Ray node runs the same code for the attempts it
is given (`factory.executor.node`)."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from factory.agent.config import AgentConfig
from factory.agent.harness import pick
from factory.agent.loop import run_agent
from factory.errors import SandboxError
from factory.executor.journal import JournalTeacher
from factory.executor.late import LateWork
from factory.executor.site import Site
from factory.protocols import Pool, Sampled, Teacher, Verifier
from factory.records import INFRA_EXITS, AttemptKey, Exit, PossiblyBilled, Task, Trajectory, Verdict
from factory.sandbox.pool import SandboxPool
from factory.sandbox.pull import Puller
from factory.verify import DockerVerifier
from factory.verify.frameworks.copies.plant import hider


@contextlib.asynccontextmanager
async def open_local(site: Site) -> AsyncIterator[LocalExecutor]:
    """This machine's warm pool and verifier for a run, and the executor over them; closed, with
    their containers, when the run ends."""
    puller = Puller.of(site.sandbox, note=site.note)  # one per run: the pool's and the verifier's pulls
    # the run's end removes what sharing start states made (`remove_left`)
    verifier = DockerVerifier(site.verifier, site.sandbox, run_id=site.run_id, puller=puller, reuse=True, share=True)
    try:
        async with SandboxPool(site.sandbox, run_id=site.run_id, puller=puller, share=True) as pool:
            yield LocalExecutor(pool, verifier, site.teachers, site.agent, journal=site.journal)
    finally:
        await verifier.close()


class LocalExecutor:
    def __init__(self, pool: Pool, verifier: Verifier | None, teachers: dict[str, Teacher], agent: AgentConfig, *,
                 journal: Callable[[AttemptKey], Path | None] = lambda key: None, node: str | None = None):
        self.pool = pool
        self.verifier = verifier
        self.teachers = teachers
        self.agent = agent
        self.late = LateWork()
        """Work past its attempt's deadline, finishing unawaited (the scheduler drains it)."""
        self.journal = journal
        """Where an attempt's paid teacher turns are journaled; None: not journaled (free teachers)."""
        self.node = node or socket.gethostname()

    def prewarm(self, task: Task) -> None:
        # a terminal task's sandbox is made under its own limits, never a warm one: its image is only pulled ahead
        self.pool.prewarm(task.image, task.workdir, count=0 if task.terminal is not None else None)

    def done_with(self, image: str) -> None:
        """No remaining attempt of the run needs `image`: the pool may let it go (`sandbox.image_cache_gb`)."""
        self.pool.done_with(image)

    async def verify(self, task: Task, patch: str, state: str | None = None) -> Verdict:
        assert self.verifier is not None
        return await self.verifier.verify(task, patch, state) if state else await self.verifier.verify(task, patch)

    async def sample(self, task: Task, key: AttemptKey, seed: int, deadline: float) -> Sampled:
        if self.verifier is None:  # a Ray node's sampling: its verification runs where Ray sends it
            return await self._sample(task, key, seed, deadline)
        self.verifier.expect(task)
        sampled = None
        try:
            sampled = await self._sample(task, key, seed, deadline)
        finally:
            if sampled is None or sampled.trajectory.exit in INFRA_EXITS or not (
                    sampled.trajectory.patch.strip() or sampled.trajectory.final_state):
                self.verifier.unexpect(task)  # no verification comes of it
        return sampled

    async def _sample(self, task: Task, key: AttemptKey, seed: int, deadline: float) -> Sampled:
        teacher = self.teachers[key.teacher]
        journal = self.journal(key)
        if journal is not None:
            teacher = JournalTeacher(teacher, journal)
        attempt_id = f"{key.instance_id}.{key.teacher}.{key.index}"[-60:]
        # the agent's view: the hidden tests taken out (`plant.hider`)
        acquire = self.pool.acquire(task.image, task.start, workdir=task.workdir, attempt_id=attempt_id,
                                    rewrite=hider(task), terminal=task.terminal)
        try:
            sandbox = await self.late.by(deadline, acquire, undo=self.pool.release)
        except (SandboxError, TimeoutError) as exc:  # a start that slow is the engine's fault, not the model's
            error = (f"SandboxStartError: not started within max_wall_seconds ({self.agent.max_wall_seconds:g} s)"
                     if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}")
            return Sampled(Trajectory(instance_id=key.instance_id, teacher=key.teacher, model=teacher.model, messages=[],
                                      exit=Exit.sandbox_error, error=error, possibly_billed=_cut_off(teacher)), self.node)
        started = time.monotonic()
        try:
            trajectory = await run_agent(task, teacher, sandbox, self.agent, attempt_seed=seed,
                                         deadline=agent_deadline(task, started, deadline),
                                         harness=pick(self.agent.harnesses, key.index))
            if task.terminal is not None and trajectory.exit not in INFRA_EXITS:  # judged by the state it left
                trajectory.final_state = await self.pool.backend.freeze(sandbox, getattr(self.pool, "run_id", "run"), attempt_id)
        finally:
            self.pool.release_in_background(sandbox)
        trajectory.teacher = key.teacher
        trajectory.possibly_billed = _cut_off(teacher)  # the journal is gone once the attempt is saved
        trajectory.wall_seconds = trajectory.wall_seconds or time.monotonic() - started
        return Sampled(trajectory, self.node)


def agent_deadline(task: Task, started: float, deadline: float) -> float:
    """When the agent must stop: the attempt's deadline, or sooner a terminal task's own agent
    timeout (`[agent] timeout_sec`), counted from its sandbox's start. Its state is then frozen and
    judged, as Harbor judges an agent that ran out of time."""
    seconds = task.terminal.agent_seconds if task.terminal is not None else None
    return deadline if seconds is None else min(deadline, started + seconds)


def _cut_off(teacher: Teacher) -> list[PossiblyBilled]:
    """The journaled requests of an attempt that never answered (`factory.executor.journal`)."""
    return list(teacher.possibly_billed) if isinstance(teacher, JournalTeacher) else []
