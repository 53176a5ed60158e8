"""The one retry layer: what is retried, how long it waits, and how failures read."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest

from factory.errors import TeacherError, TeacherFatal
from factory.teachers import AnthropicConfig, AnthropicTeacher, OpenAIConfig, OpenAITeacher
from factory.teachers.base import APITeacher
from factory.teachers.retry import RetryPolicy, Transient
from tests.teachers.fake_api import (
    FakeAPI,
    Reply,
    anthropic_message,
    dropped,
    error,
    openai_completion,
    overloaded,
    rate_limited,
    server_error,
    slow,
)
from tests.teachers.samples import CONVERSATION, FAKE_KEY, FAST, TOOLS


@dataclass
class Target:
    teacher: APITeacher
    script: Callable[..., None]
    ok: Callable[[], Reply]
    api: FakeAPI


def make_target(kind: str, fake_api: FakeAPI, **settings) -> Target:
    settings = {**FAST, "api_key": FAKE_KEY, **settings}
    if kind == "anthropic":
        teacher = AnthropicTeacher(
            AnthropicConfig(model="claude-haiku-4-5", base_url=fake_api.anthropic_url, **settings)
        )
        return Target(teacher, fake_api.anthropic, lambda: anthropic_message("ok"), fake_api)
    teacher = OpenAITeacher(
        OpenAIConfig(model="gpt-4o-mini", base_url=fake_api.openai_url, **settings)
    )
    return Target(teacher, fake_api.openai, lambda: openai_completion("ok"), fake_api)


@pytest.fixture(params=["anthropic", "openai"])
async def target(request, fake_api) -> AsyncIterator[Target]:
    made = make_target(request.param, fake_api)
    yield made
    await made.teacher.aclose()


async def test_retry_after_is_honoured(target):
    target.script(rate_limited(retry_after=1), target.ok())
    started = time.monotonic()
    completion = await target.teacher.complete(CONVERSATION, TOOLS)

    assert time.monotonic() - started >= 1.0
    assert completion.retries == 1
    assert target.teacher.stats.retry_waits == [1.0]  # the server's wait, not the 10ms backoff
    assert target.teacher.stats.rate_limited == 1
    assert len(target.api.requests) == 2


async def test_retry_after_ms_wins_and_is_honoured(target):
    target.script(rate_limited(retry_after=30, retry_after_ms=150), target.ok())
    started = time.monotonic()
    await target.teacher.complete(CONVERSATION, TOOLS)

    assert time.monotonic() - started >= 0.15
    assert target.teacher.stats.retry_waits == [0.15]


async def test_retry_after_is_capped(fake_api):
    target = make_target("anthropic", fake_api, retry_after_max=0.05)
    target.script(rate_limited(retry_after=3600), target.ok())
    await target.teacher.complete(CONVERSATION, TOOLS)
    await target.teacher.aclose()

    assert target.teacher.stats.retry_waits == [0.05]


@pytest.mark.parametrize(
    "fault",
    [overloaded(), server_error(500), server_error(503), error(408), dropped(), rate_limited()],
    ids=["529", "500", "503", "408", "dropped", "429-without-retry-after"],
)
async def test_transient_faults_are_retried_then_succeed(target, fault):
    target.script(fault, fault, target.ok())
    completion = await target.teacher.complete(CONVERSATION, TOOLS)

    assert completion.message.content == "ok"
    assert completion.retries == 2
    assert target.teacher.stats.retries == 2
    assert len(target.api.requests) == 3
    assert all(0 < wait <= FAST["backoff_max"] for wait in target.teacher.stats.retry_waits)


async def test_a_slow_answer_times_out_and_is_retried(fake_api, caplog):
    for kind in ("anthropic", "openai"):
        caplog.clear()
        target = make_target(kind, fake_api, timeout=0.2)
        target.script(slow(5.0, target.ok()), target.ok())
        completion = await target.teacher.complete(CONVERSATION, TOOLS)
        await target.teacher.aclose()

        # the first try was given up at the timeout, not answered late: the retry says so
        assert completion.retries == 1
        retried = [r.getMessage() for r in caplog.records if "retry 1/" in r.getMessage()]
        assert len(retried) == 1 and "no answer within 0.2s" in retried[0], retried


async def test_out_of_retries_is_a_teacher_error_that_says_what_to_do(target):
    target.script(*[overloaded()] * 4)
    with pytest.raises(TeacherError) as caught:
        await target.teacher.complete(CONVERSATION, TOOLS)

    assert not isinstance(caught.value, TeacherFatal)
    message = str(caught.value)
    assert target.teacher.name in message and target.teacher.model in message
    assert "HTTP 529" in message
    assert "after 3 retries" in message
    assert "rerun later" in message
    assert len(target.api.requests) == 4  # first try + max_retries, and no SDK retries
    assert target.teacher.stats.failures == 1


async def test_timeouts_out_of_retries_name_the_timeout(fake_api):
    target = make_target("openai", fake_api, timeout=0.1, max_retries=1)
    target.script(slow(5.0, target.ok()), slow(5.0, target.ok()))
    with pytest.raises(TeacherError, match=r"no answer within 0.1s .*raise `timeout`"):
        await target.teacher.complete(CONVERSATION, TOOLS)
    await target.teacher.aclose()


async def test_the_sdk_does_not_retry_on_its_own(fake_api):
    target = make_target("anthropic", fake_api, max_retries=0)
    target.script(server_error(500), target.ok())
    with pytest.raises(TeacherError):
        await target.teacher.complete(CONVERSATION, TOOLS)
    await target.teacher.aclose()

    assert len(fake_api.requests) == 1
    assert fake_api.requests[0].headers.get("x-stainless-retry-count", "0") == "0"


@pytest.mark.parametrize(
    ("status", "body_message", "expected"),
    [
        (400, "messages: field required", "refused as sent"),
        (401, "invalid x-api-key", "check the API key"),
        (403, "not allowed", "not allowed to use this model"),
        (404, "model: claude-nope", "check the model name"),
        (422, "unprocessable", "refused as sent"),
        (400, "prompt is too long: 250000 tokens > 200000 maximum", "context window"),
        (400, "This model's maximum context length is 128000 tokens", "context window"),
        (500, "prompt exceeds the maximum context length of 32768", "context window"),
    ],
)
async def test_non_retryable_errors_fail_at_once_and_clearly(
    target, status, body_message, expected
):
    target.script(error(status, body_message), target.ok())
    with pytest.raises(TeacherFatal) as caught:
        await target.teacher.complete(CONVERSATION, TOOLS)

    message = str(caught.value)
    assert f"HTTP {status}" in message
    assert body_message in message
    assert expected in message
    assert target.teacher.name in message
    assert len(target.api.requests) == 1
    assert target.teacher.stats.retries == 0


async def test_a_429_slows_the_teacher_down(target):
    target.script(rate_limited(retry_after_ms=10), target.ok())
    await target.teacher.complete(CONVERSATION, TOOLS)

    assert target.teacher.limiter.factor == 0.5
    assert target.teacher.limiter.allowed_concurrency == 4


async def test_backoff_doubles_up_to_its_cap():
    waits: list[float] = []

    async def no_sleep(seconds: float) -> None:
        pass

    policy = RetryPolicy(max_retries=5, backoff_initial=1, backoff_max=5, jitter=0, sleep=no_sleep)
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls <= 5:
            raise Transient("HTTP 500")
        return "ok"

    result, retries = await policy.run(flaky, on_retry=lambda event: waits.append(event.wait))
    assert (result, retries) == ("ok", 5)
    assert waits == [1, 2, 4, 5, 5]


async def test_jitter_spreads_the_waits():
    waits: list[float] = []

    async def no_sleep(seconds: float) -> None:
        pass

    policy = RetryPolicy(
        max_retries=6, backoff_initial=1, backoff_max=100, jitter=1, sleep=no_sleep
    )

    async def always() -> None:
        raise Transient("HTTP 503")

    with pytest.raises(Transient):
        await policy.run(
            always, on_retry=lambda event: waits.append(event.wait - 2 ** (event.number - 1))
        )
    assert len(waits) == 6  # 1, 2, 4 ... 32 seconds, each plus up to 1s of jitter
    assert all(0 <= extra <= 1 for extra in waits)
    assert len(set(waits)) > 1


async def test_errors_that_are_not_transient_are_not_retried():
    policy = RetryPolicy(max_retries=5, backoff_initial=0, jitter=0)
    calls = 0

    async def broken() -> None:
        nonlocal calls
        calls += 1
        raise KeyError("a bug, not the network")

    with pytest.raises(KeyError):
        await policy.run(broken)
    assert calls == 1
