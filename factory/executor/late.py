"""Work that passed its attempt's deadline: not cut off half-way (where it would leak), but
finished in the background and undone when it arrives.

    late = LateWork()
    sandbox = await late.by(deadline, pool.acquire(...), undo=pool.release)   # TimeoutError when late
    ...
    await late.drain()     # before the run (or the node's attempt) ends: what came late is released
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LateWork:
    def __init__(self) -> None:
        self.jobs: set[asyncio.Future] = set()

    async def by(self, deadline: float | None, work: Coroutine[Any, Any, T],
                 undo: Callable[[T], Coroutine[Any, Any, Any]] | None = None) -> T:
        """`work`'s result by `deadline` (`time.monotonic()`), else TimeoutError. Late work is
        not cancelled (an engine call in a thread cannot be stopped half-way, and what it made
        would leak): it finishes in the background and `undo` gets its result."""
        if deadline is None:
            return await work
        job = asyncio.ensure_future(work)
        try:
            return await asyncio.wait_for(asyncio.shield(job), max(deadline - time.monotonic(), 0.0))
        except TimeoutError:
            self._track(job)
            if undo is not None:
                job.add_done_callback(lambda done: self._undo(done, undo))
            raise

    def _track(self, job: asyncio.Future) -> None:
        self.jobs.add(job)
        job.add_done_callback(self.jobs.discard)

    def _undo(self, done: asyncio.Future, undo: Callable[[Any], Coroutine[Any, Any, Any]]) -> None:
        if not done.cancelled() and done.exception() is None:
            self._track(asyncio.ensure_future(undo(done.result())))

    async def drain(self) -> None:
        while self.jobs:  # late work, then the undoing of what it made
            await asyncio.gather(*self.jobs, return_exceptions=True)

    async def cancel(self) -> None:
        for job in list(self.jobs):
            job.cancel()
        await asyncio.gather(*self.jobs, return_exceptions=True)
