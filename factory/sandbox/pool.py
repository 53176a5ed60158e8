"""A warm pool: containers for upcoming attempts are started ahead of need.

Bounded by `max_live` (every live container holds a slot, warm ones included) and by a
creation rate, so start latency leaves the critical path without flooding the engine.
Warm containers hold no task state: the start state is applied when one is acquired.
An image that is not on the engine is pulled (`factory.sandbox.pull`) before a slot is taken,
so a long pull holds no slot that another image's attempt could use.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, defaultdict

from factory.errors import SandboxError
from factory.protocols import Sandbox
from factory.records import StartState, TerminalSpec
from factory.sandbox.backend import Preparation, Rewrite, sandbox_backend
from factory.sandbox.config import SandboxConfig
from factory.sandbox.pull import Puller

log = logging.getLogger(__name__)
WARM_POLL_SECONDS = 0.05


class CreationRate:
    """At most `per_second` container creations per second, spaced evenly."""

    def __init__(self, per_second: float):
        self.interval = 1.0 / per_second
        self.next_at = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        async with self.lock:
            delay = self.next_at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            self.next_at = max(self.next_at, time.monotonic()) + self.interval


class SandboxPool:
    def __init__(self, config: SandboxConfig, run_id: str = "adhoc", puller: Puller | None = None,
                 share: bool = False):
        self.config = config
        self.run_id = run_id
        self.share = share  # `Preparation.share`: the run's end removes what sharing made
        self.backend = sandbox_backend(config.backend)
        self.puller = puller or Puller.of(config)
        self.slots = asyncio.Semaphore(config.max_live)
        self.rate = CreationRate(config.create_rate)
        self.warm: dict[tuple[str, str], list[Sandbox]] = defaultdict(list)
        self.live: set[Sandbox] = set()
        self.warming: set[asyncio.Task] = set()
        self.pulling: set[asyncio.Task] = set()  # pulls ahead of need: they hold no slot
        self.trimming: set[asyncio.Task] = set()  # removals of pulled images no longer needed
        self.removing: set[asyncio.Task] = set()  # containers released in the background, on their way out
        self.starting: Counter[tuple[str, str]] = Counter()  # warm containers on their way, per image

    async def _create(self, image: str, workdir: str, attempt_id: str, config: SandboxConfig | None = None,
                      prepare: Preparation | None = None) -> Sandbox:
        """Create a container in a slot the caller already holds (at `prepare`'s start state when
        given); the slot is freed on failure."""
        try:
            await self.rate.wait()
            sandbox = await self.backend.create(
                image, config or self.config, workdir=workdir, run_id=self.run_id, attempt_id=attempt_id, prepare=prepare
            )
        except BaseException:
            self.slots.release()
            raise
        self.live.add(sandbox)
        return sandbox

    def prewarm(self, image: str, workdir: str = "/testbed", count: int | None = None) -> None:
        """Start up to `count` (default: config.warm) containers of `image` in the background,
        slots permitting; those already starting count."""
        key = (image, workdir)
        if image not in self.puller.pulls:  # the next image's pull starts ahead of need, warm or not
            background(self._pull_ahead(image), self.pulling)
        want = (self.config.warm if count is None else count) - len(self.warm[key]) - self.starting[key]
        for _ in range(want):
            self.starting[key] += 1
            background(self._warm_one(image, workdir), self.warming)

    async def _pull_ahead(self, image: str) -> None:
        with contextlib.suppress(SandboxError):  # the attempt that needs the image meets it and records it
            await self.puller.ensure(image)

    def done_with(self, image: str) -> None:
        """No remaining attempt of the run needs `image` (see `Puller.done_with`); `close` waits for
        what that removes."""
        background(self.puller.done_with(image), self.trimming)

    async def _warm_one(self, image: str, workdir: str) -> None:
        try:
            await self.puller.ensure(image)
            if self.slots.locked():
                return  # warming never waits for a slot: real attempts come first
            await self.slots.acquire()  # does not suspend: a slot is free
            sandbox = await self._create(image, workdir, "warm")
            self.warm[(image, workdir)].append(sandbox)
        except SandboxError as exc:  # the attempt that needs it meets the same error and records it
            log.info("no warm container of %s: %s", image, exc)
        finally:
            self.starting[(image, workdir)] -= 1

    async def acquire(self, image: str, start: StartState, *, workdir: str = "/testbed", attempt_id: str,
                      rewrite: Rewrite | None = None, terminal: TerminalSpec | None = None) -> Sandbox:
        """A started sandbox at the start state (`rewrite`: the agent's view of it, `Sandbox.prepare`):
        a warm one when there is one, else a new one. A terminal task's (`terminal`) is always a new
        one, under its task's limits (`SandboxConfig.for_terminal`).

        A warm container can vanish while it waits (`factory clean --all`, a user, the engine):
        one that cannot be prepared is dropped, and a new one takes its place, once.
        """
        spare = self.warm[(image, workdir)] if terminal is None else []
        if spare:
            try:
                return await self._prepared(spare.pop(), start, rewrite)
            except SandboxError as exc:
                log.warning("a warm container is unusable (%s); starting a new one", exc)
        await self.puller.ensure(image)
        await self._take_slot()
        config = None if terminal is None else self.config.for_terminal(terminal)
        return await self._create(image, workdir, attempt_id, config, Preparation(start, rewrite=rewrite, share=self.share))

    async def _prepared(self, sandbox: Sandbox, start: StartState, rewrite: Rewrite | None) -> Sandbox:
        try:
            await sandbox.prepare(start, rewrite=rewrite)
        except BaseException:
            await self.release(sandbox)
            raise
        return sandbox

    async def _take_slot(self) -> None:
        """A slot for a real attempt. Warm containers of other images give way rather than starve
        it; while some are still starting (holding slots, not yet in `warm`), it waits for them to
        land and takes one, so that warming can never hold every slot against the attempts."""
        while self.slots.locked():
            other = next((lst for lst in self.warm.values() if lst), None)
            if other is not None:
                await self.release(other.pop())
            elif self.warming:
                await asyncio.sleep(WARM_POLL_SECONDS)
            else:  # attempts hold the slots: one frees when it ends
                break
        await self.slots.acquire()

    async def release(self, sandbox: Sandbox) -> None:
        if sandbox not in self.live:
            return
        self.live.discard(sandbox)
        try:
            await asyncio.shield(sandbox.close())
        finally:
            self.slots.release()

    def release_in_background(self, sandbox: Sandbox) -> None:
        """`release` in the background: its attempt goes on to verification while the engine
        removes the container (seconds under load); the slot frees once it is gone."""
        background(self.release(sandbox), self.removing)

    async def close(self) -> None:
        """Cancel warming and remove every container this pool started."""
        for task in [*self.warming, *self.pulling]:
            task.cancel()
        await asyncio.gather(*self.warming, *self.pulling, *self.removing, return_exceptions=True)
        await asyncio.gather(*(self.release(s) for s in list(self.live)), return_exceptions=True)
        await asyncio.gather(*self.trimming, return_exceptions=True)
        self.warm.clear()

    async def __aenter__(self) -> SandboxPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def background(work, tasks: set[asyncio.Task]) -> None:
    """Run `work` as a task held in `tasks` until it ends (so `close` can find it)."""
    task = asyncio.create_task(work)
    tasks.add(task)
    task.add_done_callback(tasks.discard)
