"""Verification containers started ahead of need: while an attempt samples, a fresh container at
its task's start state waits for its patch, so its verification starts where its sampling ends.

    LocalExecutor.sample ─► verifier.expect(task)    one more container of the task on its way
                                                      (at most `verifier.ahead` waiting in all)
    DockerVerifier._run  ─► Ahead.take(task)          one of them, or None: the verification starts its own
    nothing to verify    ─► verifier.unexpect(task)   (an empty patch, an infrastructure exit) one fewer

Such a container is exactly the one a verification would start, started sooner: root's start
script and the start state ran in it, nothing else; no agent ever had it. Sampling waits on the
teacher, so the engine starts these while it would otherwise idle; `AT_ONCE` of them start at a
time, so that a burst of attempts does not delay its own sandboxes behind them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable

from factory.errors import SandboxError
from factory.protocols import Sandbox
from factory.records import Task
from factory.sandbox.pool import background

AT_ONCE = 2
log = logging.getLogger(__name__)


class Ahead:
    def __init__(self, start: Callable[[Task], Awaitable[Sandbox]], limit: int):
        self._start = start
        self.limit = limit
        self._waiting: dict[str, list[asyncio.Task[Sandbox]]] = defaultdict(list)
        self._expected: Counter[str] = Counter()
        """Verifications to come, per task: attempts sampling now."""
        self._gate = asyncio.Semaphore(AT_ONCE)
        self._leaving: set[asyncio.Task] = set()

    def expect(self, task: Task) -> None:
        key = task.instance_id
        self._expected[key] += 1
        if sum(map(len, self._waiting.values())) < self.limit and len(self._waiting[key]) < self._expected[key]:
            self._waiting[key].append(asyncio.create_task(self._started(task)))

    def unexpect(self, task: Task) -> None:
        key = task.instance_id
        self._expected[key] = max(0, self._expected[key] - 1)
        while len(self._waiting[key]) > self._expected[key]:
            self._drop(self._waiting[key].pop())

    async def take(self, task: Task) -> Sandbox | None:
        """A container started for `task`'s verification (the first ready, else the first still
        starting), or None when there is none or it could not start."""
        key = task.instance_id
        self._expected[key] = max(0, self._expected[key] - 1)
        waiting = self._waiting.get(key)
        if not waiting:
            return None
        job = next((j for j in waiting if j.done()), waiting[0])
        waiting.remove(job)
        try:
            return await job
        except SandboxError as exc:  # the verification starts its own, and meets the same error if it lasts
            log.info("no container ahead for %s: %s", key, exc)
            return None

    async def close(self) -> None:
        """Remove every container still waiting (a run ends, or is interrupted)."""
        for jobs in self._waiting.values():
            for job in jobs:
                self._drop(job)
        self._waiting.clear()
        await asyncio.gather(*self._leaving, return_exceptions=True)

    async def _started(self, task: Task) -> Sandbox:
        async with self._gate:
            return await self._start(task)

    def _drop(self, job: asyncio.Task[Sandbox]) -> None:
        """Cancel a container on its way, or remove it if it is there (in the background)."""
        async def leave() -> None:
            job.cancel()
            with contextlib.suppress(BaseException):
                await (await job).close()

        background(leave(), self._leaving)
