"""The one retry layer for teacher calls (tenacity).

A call is retried only when it raises `Transient`: the teachers raise it for 408, 409, 429,
529 and other 5xx answers, timeouts and dropped connections. Everything else (400, 401, 403,
404, 413, 422, context length) is turned into `TeacherFatal` before it reaches this layer, so
it is never retried. The SDKs' own retries are switched off (`max_retries=0`) so that every
retry happens, and is counted, here.

The wait before retry n is the server's `retry-after-ms` / `retry-after` when it sent one
(capped at `retry_after_max`), else jittered exponential backoff:
`min(backoff_max, backoff_initial * 2**(n-1) + uniform(0, jitter))`.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

T = TypeVar("T")


class Transient(Exception):
    """A teacher call failed in a way another try may fix. Internal to the teachers."""

    def __init__(self, what: str, *, status: int | None = None, retry_after: float | None = None):
        super().__init__(what)
        self.what, self.status, self.retry_after = what, status, retry_after

    @property
    def rate_limited(self) -> bool:
        return self.status == 429


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` (seconds or an HTTP date)."""
    if not headers:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(float(ms) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(when - (time.time() if now is None else now), 0.0)


@dataclass(frozen=True)
class RetryEvent:
    """One retry about to happen: which one, how long it waits, and why."""

    number: int
    wait: float
    error: Transient


class RetryPolicy:
    """Runs a call up to `1 + max_retries` times, waiting between tries as described above."""

    def __init__(
        self,
        *,
        max_retries: int = 6,
        backoff_initial: float = 1.0,
        backoff_max: float = 60.0,
        jitter: float = 1.0,
        retry_after_max: float = 120.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        self.max_retries = max_retries
        self.retry_after_max = retry_after_max
        self._backoff = wait_exponential_jitter(
            multiplier=backoff_initial, max=backoff_max, jitter=jitter
        )
        self._sleep = sleep

    def wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, Transient) and error.retry_after and error.retry_after > 0:
            return min(error.retry_after, self.retry_after_max)
        return self._backoff(state)

    async def run(
        self,
        call: Callable[[], Awaitable[T]],
        on_retry: Callable[[RetryEvent], None] = lambda event: None,
    ) -> tuple[T, int]:
        """`call()`'s result and how many retries it took; the last `Transient` once out of tries."""

        def before_sleep(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            assert isinstance(error, Transient)
            on_retry(
                RetryEvent(number=state.attempt_number, wait=state.upcoming_sleep, error=error)
            )

        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=self.wait,
            retry=retry_if_exception_type(Transient),
            before_sleep=before_sleep,
            sleep=self._sleep,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                result = await call()
        return result, attempt.retry_state.attempt_number - 1
