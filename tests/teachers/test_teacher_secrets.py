"""No API key in a trajectory, a log line or an error message: run with a recognisable key."""

from __future__ import annotations

import logging
import traceback

import pytest

from factory.errors import TeacherError, TeacherFatal
from factory.records import Exit, Trajectory, Turn
from tests.teachers.fake_api import (
    anthropic_message,
    error,
    openai_completion,
    overloaded,
    rate_limited,
)
from tests.teachers.samples import CONVERSATION, FAKE_KEY, TOOLS


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_the_key_never_leaves_the_auth_header(kind, fake_api, claude, gpt, caplog):
    caplog.set_level(logging.DEBUG)  # everything: ours, the SDKs', the HTTP client's
    teacher, script = (
        (claude, fake_api.anthropic) if kind == "anthropic" else (gpt, fake_api.openai)
    )
    ok = anthropic_message if kind == "anthropic" else openai_completion
    echo = f"Incorrect API key provided: {FAKE_KEY}"  # servers do echo keys back

    script(
        rate_limited(retry_after_ms=10),
        ok(
            "first",
            tool_calls=[{"name": "bash", "input": {"cmd": "ls"}, "arguments": '{"cmd": "ls"}'}],
        ),
    )
    completion = await teacher.complete(CONVERSATION, TOOLS)
    script(error(401, echo))
    with pytest.raises(TeacherFatal) as fatal:
        await teacher.complete(CONVERSATION, TOOLS)
    script(*[error(500, echo)] * 4)
    with pytest.raises(TeacherError) as exhausted:
        await teacher.complete(CONVERSATION, TOOLS)
    script(overloaded(), error(403, echo))
    with pytest.raises(TeacherFatal) as forbidden:
        await teacher.complete(CONVERSATION, TOOLS)

    trajectory = Trajectory(
        instance_id="demo__1",
        teacher=teacher.name,
        model=teacher.model,
        messages=[*CONVERSATION, completion.message],
        tools=TOOLS,
        exit=Exit.teacher_error,
        error=str(fatal.value),
        turns=[
            Turn(usage=completion.usage, cost_usd=completion.cost_usd, retries=completion.retries)
        ],
    )
    assert FAKE_KEY not in trajectory.model_dump_json()
    for caught in (fatal, exhausted, forbidden):
        assert FAKE_KEY not in str(caught.value)
        assert FAKE_KEY not in repr(caught.value)
        assert FAKE_KEY not in "".join(traceback.format_exception(caught.value))
        assert "[redacted]" in str(caught.value)
    assert any(
        r.name.startswith(("anthropic", "openai", "httpx")) for r in caplog.records
    )  # SDK logs were on
    assert FAKE_KEY not in caplog.text
    assert all(FAKE_KEY not in r.getMessage() for r in caplog.records)
    assert len(fake_api.requests) == 2 + 1 + 4 + 2
    for request in fake_api.requests:
        assert FAKE_KEY not in request.raw
        holders = {name for name, value in request.headers.items() if FAKE_KEY in value}
        assert holders and holders <= {"authorization", "x-api-key"}
