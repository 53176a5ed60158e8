"""How attempts end: format errors, turn, token, cost and time limits, teacher and sandbox failures."""

from __future__ import annotations

import logging

import pytest

from factory.agent import run_agent
from factory.config import AgentConfig
from factory.records import Exit
from factory.teachers import OpenAIConfig, OpenAITeacher, Price
from factory.teachers.scripted import ScriptedConfig, ScriptedProfile, ScriptedTeacher
from tests.agent.calls import SUBMIT, bash
from tests.teachers.fake_api import (
    anthropic_message,
    error,
    openai_completion,
    server_error,
    slow,
)
from tests.teachers.samples import FAKE_KEY, FAST


def busy(n: int, **usage) -> list:
    """n turns that each write one line to work.txt."""
    return [
        openai_completion(tool_calls=[bash(f"echo {i} >> work.txt")], usage=usage or None)
        for i in range(n)
    ]


@pytest.mark.parametrize(
    "call, says",
    [
        (
            {"name": "bash", "arguments": '{"command": "echo hi > x.txt"'},
            "bash: arguments are not valid JSON",
        ),
        ({"name": "python", "arguments": {"code": "print(1)"}}, "unknown tool 'python'"),
        (
            {"name": "str_replace_editor", "arguments": {"command": "create", "path": "x.txt"}},
            "missing argument 'file_text'",
        ),
    ],
)
async def test_a_malformed_call_ends_the_attempt_with_format_error(
    task, local, gpt, fake_api, call, says
):
    fake_api.openai(
        openai_completion(tool_calls=[bash("echo before > before.txt")]),
        openai_completion(tool_calls=[bash("echo x > y.txt"), call]),
    )
    t = await run_agent(task, gpt, local, AgentConfig())
    assert t.exit is Exit.format_error
    assert t.error.startswith("FormatError: ") and says in t.error
    assert t.messages[-1].role == "assistant"  # recorded, and nothing of that turn ran
    assert local.commands[:1] == ["echo before > before.txt"] and not any(
        "y.txt" in c for c in local.commands
    )
    assert "before.txt" in t.patch and "y.txt" not in t.patch


async def test_format_errors_can_be_re_prompted(task, local, gpt, fake_api):
    malformed = {"name": "bash", "arguments": '{"command": "ls'}
    fake_api.openai(
        openai_completion(tool_calls=[bash("echo x > y.txt"), malformed]),
        openai_completion(tool_calls=[bash("echo fixed > y.txt")]),
        openai_completion(tool_calls=[malformed]),
        openai_completion(tool_calls=[malformed]),
    )
    t = await run_agent(task, gpt, local, AgentConfig(format_error_retries=2))
    assert t.exit is Exit.format_error and len(t.turns) == 4
    not_run, why = t.messages[3].content, t.messages[4].content
    assert not_run.startswith("Not run: another tool call of this turn was malformed")
    assert why.startswith("Error: malformed tool call (bash: arguments are not valid JSON")
    assert fake_api.requests[1].body["messages"][-1]["content"] == why  # the model saw it
    assert t.messages[6].content == "(no output)"  # the corrected call ran
    assert t.patch.endswith("+fixed\n")


async def test_turn_limit(task, local, gpt, fake_api):
    fake_api.openai(*busy(5))
    t = await run_agent(task, gpt, local, AgentConfig(max_turns=3))
    assert t.exit is Exit.max_turns and len(t.turns) == 3
    assert t.messages[-1].role == "tool"  # the last allowed turn's tools ran
    assert t.patch.endswith("+0\n+1\n+2\n")  # the patch at the limit
    assert fake_api.pending("/v1/chat/completions") == 2


async def test_token_limit_counts_input_and_output_and_stops_before_the_turns_tools(
    task, local, gpt, fake_api
):
    fake_api.openai(*busy(5, prompt_tokens=400, completion_tokens=100))
    t = await run_agent(task, gpt, local, AgentConfig(max_tokens=1200))
    assert t.exit is Exit.max_tokens and len(t.turns) == 3
    assert t.messages[-1].role == "assistant"
    assert t.patch.endswith("+0\n+1\n")


async def test_cost_limit(task, local, fake_api):
    teacher = OpenAITeacher(
        OpenAIConfig(
            model="my-model",
            base_url=fake_api.openai_url,
            api_key=FAKE_KEY,
            price=Price(input=1000, output=0, cache_read=0, cache_write=0),
            **FAST,
        )
    )
    fake_api.openai(*busy(5, prompt_tokens=300, completion_tokens=1))  # $0.30 a turn
    t = await run_agent(task, teacher, local, AgentConfig(max_cost_usd=0.8))
    await teacher.aclose()
    assert t.exit is Exit.budget and len(t.turns) == 3
    assert t.cost_usd == pytest.approx(0.9)


async def test_unknown_costs_never_trip_the_cost_limit(task, local, fake_api):
    teacher = OpenAITeacher(
        OpenAIConfig(model="unpriced-model", base_url=fake_api.openai_url, api_key=FAKE_KEY, **FAST)
    )
    fake_api.openai(*busy(2, prompt_tokens=100_000), openai_completion(tool_calls=[SUBMIT]))
    t = await run_agent(task, teacher, local, AgentConfig(max_cost_usd=0.01))
    await teacher.aclose()
    assert t.exit is Exit.submitted and t.cost_usd is None


async def test_wall_time_limit_while_the_teacher_thinks_or_a_command_runs(
    task, local, gpt, fake_api
):
    fake_api.openai(slow(3, openai_completion(tool_calls=[SUBMIT])))
    t = await run_agent(task, gpt, local, AgentConfig(max_wall_seconds=0.5))
    assert t.exit is Exit.timeout and len(t.turns) == 0  # the reply never came into the run

    command = "echo started > s.txt; sleep 20; echo finished > f.txt"
    fake_api.openai(openai_completion(tool_calls=[bash(command)]))
    t = await run_agent(task, gpt, local, AgentConfig(max_wall_seconds=1.5))
    assert t.exit is Exit.timeout
    assert "+started" in t.patch and "finished" not in t.patch  # the command was cut, not waited for


async def test_scripted_latency_counts_against_wall_time(task, local):
    slow_teacher = ScriptedTeacher(ScriptedConfig(profile=ScriptedProfile(latency_seconds=0.4)))
    t = await run_agent(task, slow_teacher, local, AgentConfig(max_wall_seconds=1.0))
    assert t.exit is Exit.timeout and 1 <= len(t.turns) <= 3


async def test_teacher_failure_after_retries_is_teacher_error_with_the_patch_so_far(
    task, local, gpt, fake_api
):
    fake_api.openai(
        openai_completion(tool_calls=[bash("echo kept > k.txt")]), *[server_error()] * 4
    )
    t = await run_agent(task, gpt, local, AgentConfig())
    assert t.exit is Exit.teacher_error
    assert t.error.startswith("TeacherError: teacher 'gpt-4.1'") and "HTTP 500" in t.error
    assert "+kept" in t.patch and len(t.turns) == 1


async def test_a_dead_sandbox_is_sandbox_error_without_a_patch(task, local, gpt, fake_api):
    local.crash_on = "boom"
    fake_api.openai(
        openai_completion(tool_calls=[bash("echo x > x.txt")]),
        openai_completion(tool_calls=[bash("boom")]),
    )
    t = await run_agent(task, gpt, local, AgentConfig())
    assert t.exit is Exit.sandbox_error and t.error.startswith("SandboxCrashed: ")
    assert t.patch == ""


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_no_key_in_the_trajectory_or_the_logs(
    kind, task, local, claude, gpt, fake_api, monkeypatch, caplog
):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    echo = f"Incorrect API key provided: {FAKE_KEY}"
    if kind == "anthropic":
        teacher = claude
        fake_api.anthropic(
            anthropic_message(tool_calls=[{"name": "bash", "input": {"command": "env"}}]),
            error(401, echo),
        )
    else:
        teacher = gpt
        fake_api.openai(openai_completion(tool_calls=[bash("env")]), error(401, echo))
    t = await run_agent(task, teacher, local, AgentConfig())
    assert t.exit is Exit.teacher_error and "[redacted]" in t.error
    assert FAKE_KEY not in t.model_dump_json()
    assert FAKE_KEY not in caplog.text
    assert any(r.name == "factory.agent" for r in caplog.records)
