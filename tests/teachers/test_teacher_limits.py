"""Per-teacher limits, on a fake clock so that minutes pass instantly."""

from __future__ import annotations

import asyncio

import pytest

from factory.teachers import OpenAIConfig, OpenAITeacher
from factory.teachers.limits import RateLimiter
from tests.teachers.fake_api import openai_completion, slow
from tests.teachers.samples import CONVERSATION


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def limiter(clock: Clock, **kwargs) -> RateLimiter:
    return RateLimiter(clock=clock, sleep=clock.sleep, **kwargs)


async def take(lim: RateLimiter, tokens: int = 0) -> None:
    async with lim.slot(tokens):
        pass


async def test_requests_per_minute_allow_a_burst_then_pace():
    clock = Clock()
    lim = limiter(clock, rpm=2)
    for _ in range(3):
        await take(lim)

    assert clock.slept == [pytest.approx(30.0)]  # the third waits for half a minute


async def test_tokens_per_minute_wait_for_the_estimate_and_learn_the_real_usage():
    clock = Clock()
    lim = limiter(clock, tpm=6000)
    await take(lim, 6000)
    assert clock.slept == []

    await take(lim, 1000)  # the bucket is empty: wait 10s for 1000 tokens
    assert clock.slept == [pytest.approx(10.0)]

    lim.used(3000)  # that call really used 4000: the next waits for the difference too
    await take(lim, 1000)
    assert sum(clock.slept) == pytest.approx(10.0 + 40.0)


async def test_concurrency_is_a_ceiling():
    lim = RateLimiter(concurrency=2)
    peak = 0
    release = asyncio.Event()

    async def call() -> None:
        nonlocal peak
        async with lim.slot():
            peak = max(peak, lim.in_flight)
            await release.wait()

    tasks = [asyncio.create_task(call()) for _ in range(5)]
    await asyncio.sleep(0.01)
    assert lim.in_flight == 2
    release.set()
    await asyncio.gather(*tasks)
    assert peak == 2
    assert lim.in_flight == 0


async def test_a_429_pauses_halves_and_then_recovers():
    clock = Clock()
    lim = limiter(clock, concurrency=8, rpm=60, slowdown_seconds=60)
    for _ in range(60):
        await take(lim)  # spend the burst
    lim.rate_limited(retry_after=5)

    assert lim.factor == 0.5
    assert lim.allowed_concurrency == 4
    await take(lim)
    assert clock.slept == [pytest.approx(5.0)]  # every call waits out the retry-after
    # 5s at half rate refilled 2.5 requests: one more goes at once, then one per 2s (not 1s)
    await take(lim)
    await take(lim)
    assert clock.slept == [pytest.approx(5.0), pytest.approx(1.0)]
    await take(lim)
    assert clock.slept[-1] == pytest.approx(2.0)

    lim.rate_limited()
    assert lim.factor == 0.25
    clock.now += 61
    assert lim.factor == 1.0
    assert lim.allowed_concurrency == 8


async def test_halving_stops_at_a_sixteenth():
    lim = limiter(Clock(), concurrency=4)
    for _ in range(10):
        lim.rate_limited()

    assert lim.factor == pytest.approx(1 / 16)
    assert lim.allowed_concurrency == 1


async def test_a_slot_is_given_back_when_the_call_fails():
    lim = RateLimiter(concurrency=1)
    with pytest.raises(RuntimeError):
        async with lim.slot():
            raise RuntimeError("boom")

    assert lim.in_flight == 0
    await asyncio.wait_for(take(lim), timeout=1)


async def test_a_teacher_never_has_more_requests_in_flight_than_its_concurrency(fake_api):
    teacher = OpenAITeacher(OpenAIConfig(model="m", base_url=fake_api.openai_url, concurrency=2))
    fake_api.openai(*[slow(0.05, openai_completion("ok")) for _ in range(6)])
    completions = await asyncio.gather(*[teacher.complete(CONVERSATION, []) for _ in range(6)])
    await teacher.aclose()

    assert [c.message.content for c in completions] == ["ok"] * 6
    assert fake_api.peak_in_flight == 2
