"""Images that are not on the engine come from the registry in their name.

The policy is here (one pull per image, retries, the cache bound); a pull itself and an
image's removal are the backend's (`SandboxBackend.pull`, `remove_image`).

A run pulls an image the first time one of its sandboxes needs it (`Puller.ensure`); needs
of one image that come while it is being pulled wait on that same pull. At most
`sandbox.pull_concurrency` pulls run at once; each is retried with backoff when the registry
says too many requests (HTTP 429, `toomanyrequests`) or fails in passing (a 5xx, a dropped
connection, a timeout). An image that cannot be had raises one `ImageUnavailable` that names
it and says why; the attempt that needed it ends as infrastructure, so a resume makes it
again once the image can be had. Within a run an image is tried once: the attempts after the
first failure fail at once with the same error, instead of queueing for the registry again.

`sandbox.image_cache_gb` bounds what a run's own pulls hold on disk: when they pass it, the
images that none of the run's remaining tasks needs (`done_with`) are removed, oldest pull
first. An image the run found on the engine is never removed, nor one that a container
(anyone's) still uses: the engine refuses that, and the image stays.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from factory.errors import EngineError, SandboxStartError
from factory.sandbox.backend import DEFAULT_BACKEND, sandbox_backend
from factory.sandbox.config import SandboxConfig

log = logging.getLogger(__name__)
# what a registry says when it will not serve an image at all: retrying cannot help
PERMANENT = ("manifest unknown", "not found", "unauthorized", "denied", "invalid reference", "no such host",
             "repository does not exist", "pull access denied")


class ImageUnavailable(SandboxStartError):
    """The image is not on the engine and its registry did not give it."""


class PullFailed(Exception):
    """One pull that did not get the image; `transient` says whether another try may."""

    def __init__(self, message: str, transient: bool):
        super().__init__(message)
        self.transient = transient


def is_transient(message: str) -> bool:
    """Rate limits and passing faults are worth another try; a registry that says the image is
    not there, or not for us, is not (rate limits first: their text may say `denied` too)."""
    text = message.lower()
    # 429 as a status word only: an image's registry port (127.0.0.1:54297) or tag may hold the digits
    if "toomanyrequests" in text or re.search(r"\b429\b", text) or "too many requests" in text:
        return True
    return not any(word in text for word in PERMANENT)


@dataclass
class Pulled:
    image: str
    bytes: int
    at: float
    done: bool = False  # no remaining task of the run needs it


class Puller:
    """The pulls of one run (see the module's doc)."""

    def __init__(self, *, concurrency: int = 2, attempts: int = 6, backoff_seconds: float = 2.0,
                 cache_bytes: int | None = None, note: Callable[[str], None] | None = None,
                 backend: str = DEFAULT_BACKEND):
        self.backend = sandbox_backend(backend)
        self.slots = asyncio.Semaphore(concurrency)
        self.attempts = attempts
        self.backoff = backoff_seconds
        self.cache_bytes = cache_bytes
        self.note = note or log.info
        self.pulls: dict[str, asyncio.Future[None]] = {}  # one per image, shared by its waiters
        self.pulled: dict[str, Pulled] = {}  # by this run, in the order they came

    @classmethod
    def of(cls, config: SandboxConfig, note: Callable[[str], None] | None = None) -> Puller:
        cache = None if config.image_cache_gb is None else int(config.image_cache_gb * 1e9)
        return cls(concurrency=config.pull_concurrency, attempts=config.pull_attempts, cache_bytes=cache, note=note,
                   backend=config.backend)

    async def ensure(self, image: str) -> None:
        """Return once `image` is on the engine; pull it if not (see the module's doc)."""
        pull = self.pulls.get(image)
        if pull is None or pull.get_loop() is not asyncio.get_running_loop():  # a verifier outlives its loops
            pull = self.pulls[image] = asyncio.ensure_future(self._fetch(image))
        await asyncio.shield(pull)  # one waiter cancelled never cancels the pull the others wait on

    async def _fetch(self, image: str) -> None:
        if await asyncio.to_thread(self.backend.image_exists, image):
            return
        async with self.slots:
            started = time.monotonic()
            self.note(f"pulling {image}")
            try:
                async for attempt in AsyncRetrying(
                    stop=stop_after_attempt(self.attempts),
                    wait=wait_exponential_jitter(multiplier=self.backoff, max=60 * self.backoff),
                    retry=retry_if_exception(lambda e: isinstance(e, PullFailed) and e.transient),
                    before_sleep=lambda state: self.note(
                        f"pulling {image}: {state.outcome.exception()}; trying again"),
                    reraise=True,
                ):
                    with attempt:
                        size = await self.backend.pull(image, self.note)
            except PullFailed as exc:
                tries = "" if not exc.transient else f" after {self.attempts} tries"
                raise ImageUnavailable(f"image {image} is not on this engine and could not be pulled{tries}: {exc}; "
                                       f"push it to its registry, or build or load it (docker load)") from None
            self.note(f"pulled {image} ({size / 1e9:.2f} GB, {time.monotonic() - started:.0f} s)")
            self.pulled[image] = Pulled(image, size, time.time())
        await self._trim()

    async def done_with(self, image: str) -> None:
        """No remaining task of the run needs `image`: it may go when the cache is over its bound."""
        if image in self.pulled:
            self.pulled[image].done = True
            await self._trim()

    async def _trim(self) -> None:
        if self.cache_bytes is None:
            return
        for entry in sorted(self.pulled.values(), key=lambda p: p.at):
            if sum(p.bytes for p in self.pulled.values()) <= self.cache_bytes:
                return
            if not entry.done:
                continue
            try:
                await self.backend.remove_image(entry.image)
            except EngineError as exc:  # a container uses it, or the engine stumbled: it stays
                log.info("image %s stays: %s", entry.image, exc)
                continue
            del self.pulled[entry.image]
            self.pulls.pop(entry.image, None)  # needed again after all: pulled again
            self.note(f"removed {entry.image} (image_cache_gb)")
