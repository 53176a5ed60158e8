"""Per-teacher request limits: concurrency, requests per minute, tokens per minute.

Each try of a call holds one slot: it waits for a free concurrency slot, then for the
request and token buckets. Buckets start full (a burst of one minute's allowance) and refill
continuously. Tokens are estimated before the request and corrected from the reported usage
after it, so a bucket can go negative and hold back the calls that follow.

On a 429 the limiter slows down: every call of this teacher waits out the `retry-after`,
and the allowed rate and concurrency halve (down to 1/16) until `slowdown_seconds` pass
without another 429, when they return to the configured values.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

MIN_FACTOR = 1 / 16


class _Bucket:
    def __init__(self, per_minute: float, now: float):
        self.capacity = float(per_minute)
        self.level = float(per_minute)
        self.per_second = per_minute / 60
        self.stamp = now

    def refill(self, now: float, factor: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.per_second * factor)
        self.stamp = now

    def delay(self, amount: float, factor: float) -> float:
        """Seconds until `amount` (at most the capacity) is available; 0 when it is."""
        need = min(amount, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / (self.per_second * factor)


class RateLimiter:
    def __init__(
        self,
        *,
        concurrency: int = 8,
        rpm: float | None = None,
        tpm: float | None = None,
        slowdown_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        self.concurrency = concurrency
        self.slowdown_seconds = slowdown_seconds
        self._clock, self._sleep = clock, sleep
        now = clock()
        self._requests = _Bucket(rpm, now) if rpm else None
        self._tokens = _Bucket(tpm, now) if tpm else None
        self._in_flight = 0
        self._changed = asyncio.Condition()
        self._factor = 1.0
        self._last_429 = -math.inf
        self._paused_until = -math.inf

    @property
    def factor(self) -> float:
        """The share of the configured rate and concurrency currently allowed (1.0 = all)."""
        if self._clock() - self._last_429 >= self.slowdown_seconds:
            self._factor = 1.0
        return self._factor

    @property
    def allowed_concurrency(self) -> int:
        return max(1, math.floor(self.concurrency * self.factor))

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def _delay(self, tokens: float) -> float:
        now, factor = self._clock(), self.factor
        delay = max(0.0, self._paused_until - now)
        for bucket, amount in ((self._requests, 1), (self._tokens, tokens)):
            if bucket is not None:
                bucket.refill(now, factor)
                delay = max(delay, bucket.delay(amount, factor))
        return delay

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[None]:
        """Hold one request's place: a concurrency slot, one request and `tokens` tokens."""
        async with self._changed:
            await self._changed.wait_for(lambda: self._in_flight < self.allowed_concurrency)
            self._in_flight += 1
        try:
            while (delay := self._delay(tokens)) > 0:
                await self._sleep(delay)
            if self._requests is not None:
                self._requests.level -= 1
            if self._tokens is not None:
                self._tokens.level -= tokens
            yield
        finally:
            async with self._changed:
                self._in_flight -= 1
                self._changed.notify_all()

    def used(self, extra_tokens: int) -> None:
        """Correct the token estimate once the real usage is known (negative gives back)."""
        if self._tokens is not None:
            self._tokens.level -= extra_tokens

    def rate_limited(self, retry_after: float | None = None) -> None:
        """A 429 came back: pause every call for `retry_after`, and halve rate and concurrency."""
        now = self._clock()
        self._factor = max(MIN_FACTOR, self.factor / 2)
        self._last_429 = now
        if retry_after:
            self._paused_until = max(self._paused_until, now + retry_after)
