"""The loop against a host-folder sandbox: what is sent, what is recorded, how tool calls run."""

from __future__ import annotations

import asyncio
import json

import pytest

from factory.agent import TOOLS, run_agent
from factory.config import AgentConfig
from factory.errors import UsageError
from factory.records import Completion, Exit, Message, ToolCall, Usage
from tests.agent.calls import SUBMIT, bash, edit
from tests.teachers.fake_api import openai_completion, slow

CONFIG = AgentConfig(max_turns=10)


def as_sent(messages: list[Message]) -> list[dict]:
    """Our messages in the layout the OpenAI teacher sends them."""
    out = []
    for m in messages:
        d = m.to_openai()
        if m.role == "assistant" and m.tool_calls and not m.content:
            d["content"] = None
        out.append(d)
    return out


async def test_a_fix_through_the_openai_teacher_is_recorded_exactly_as_sent(
    task, local, gpt, fake_api
):
    fake_api.openai(
        openai_completion(
            "Looking.",
            tool_calls=[bash("grep -n 'a - b' calc/ops.py")],
            usage={"prompt_tokens": 900, "completion_tokens": 40},
        ),
        openai_completion(
            tool_calls=[
                edit(
                    command="str_replace",
                    path="calc/ops.py",
                    old_str="def add(a, b):\n    return a - b",
                    new_str="def add(a, b):\n    return a + b",
                )
            ]
        ),
        openai_completion("Fixed.", tool_calls=[SUBMIT]),
    )
    t = await run_agent(task, gpt, local, CONFIG)

    assert t.exit is Exit.submitted and t.error is None
    assert "\n-    return a - b\n+    return a + b\n \n \n def sub" in t.patch
    assert (t.instance_id, t.teacher, t.model, t.scripted) == (
        "calc__add",
        "gpt-4.1",
        "gpt-4.1",
        False,
    )
    assert t.tools == TOOLS
    assert [m.role for m in t.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert (
        "`add(2, 3)` returns -1" in t.messages[1].content and local.workdir in t.messages[1].content
    )
    grep = t.messages[3]
    assert (grep.tool_call_id, grep.name) == (t.messages[2].tool_calls[0].id, "bash")
    assert grep.content == "2:    return a - b\n6:    return a - b"
    # every request carried the conversation so far, exactly as recorded
    bodies = [r.body for r in fake_api.requests]
    assert [b["messages"] for b in bodies] == [as_sent(t.messages[:n]) for n in (2, 4, 6)]
    assert all(b["tools"] == TOOLS for b in bodies)
    assert len(t.turns) == 3
    assert t.turns[0].usage == Usage(input_tokens=900, output_tokens=40)
    assert t.usage.input_tokens == 920 and t.cost_usd is not None and t.cost_usd > 0
    assert all(turn.seconds > 0 for turn in t.turns) and t.wall_seconds >= sum(
        x.seconds for x in t.turns
    )


async def test_tool_calls_of_one_turn_run_in_order_and_submit_stops_the_rest(
    task, local, gpt, fake_api
):
    fake_api.openai(
        openai_completion(
            tool_calls=[
                bash("echo one > notes.txt"),
                bash("echo two >> notes.txt"),
                bash("cat notes.txt"),
            ]
        ),
        openai_completion(
            tool_calls=[bash("echo three >> notes.txt"), SUBMIT, bash("echo never >> notes.txt")]
        ),
    )
    t = await run_agent(task, gpt, local, CONFIG)
    assert t.exit is Exit.submitted
    assert t.messages[5].content == "one\ntwo"
    assert (await local.read_file("notes.txt")) == b"one\ntwo\nthree\n"
    roles = [m.role for m in t.messages[2:]]
    assert roles == [
        "assistant",
        "tool",
        "tool",
        "tool",
        "assistant",
        "tool",
    ]  # nothing after submit ran
    assert "+three" in t.patch


async def test_an_answer_without_tool_calls_ends_the_attempt(task, local, gpt, fake_api):
    fake_api.openai(
        openai_completion(tool_calls=[bash("echo x > x.txt")]), openai_completion("I am done.")
    )
    t = await run_agent(task, gpt, local, CONFIG)
    assert t.exit is Exit.submitted and t.messages[-1].content == "I am done."
    assert "+x" in t.patch


async def test_long_output_is_cut_and_slow_commands_are_killed(task, local, gpt, fake_api):
    fake_api.openai(
        openai_completion(
            tool_calls=[
                bash("seq 1 5000"),
                bash("sleep 30; echo late", timeout=600),
                bash("exit 3"),
            ]
        ),
        openai_completion(tool_calls=[SUBMIT]),
    )
    t = await run_agent(task, gpt, local, AgentConfig(output_limit=300, command_timeout=1))
    long, slow_one, failed = (m.content for m in t.messages[3:6])
    assert long.startswith("1\n2\n") and long.endswith("4999\n5000")
    assert "characters cut: output over 300 characters" in long and len(long) < 400
    assert slow_one == "(no output)\n[the command timed out after 1 seconds and was killed]"
    assert failed == "(no output)\n[exit code 3]"


class Recorder:
    """A teacher with a `session` hook, like the scripted one."""

    name = model = "recorder"

    def __init__(self):
        self.opened: list[tuple[str, int]] = []

    def session(self, task, seed):
        self.opened.append((task.instance_id, seed))
        return _Submitter()


class _Submitter:
    name, model, scripted = "recorder-session", "recorder-1", True

    async def complete(self, messages, tools):
        call = ToolCall(id="s", name="submit", arguments="{}")
        return Completion(message=Message(role="assistant", tool_calls=[call]), cost_usd=0.0)


async def test_a_teacher_with_sessions_gets_one_per_attempt(task, local):
    recorder = Recorder()
    t = await run_agent(task, recorder, local, CONFIG, attempt_seed=7)
    assert recorder.opened == [("calc__add", 7)]
    assert (t.teacher, t.model, t.scripted, t.exit) == (
        "recorder-session",
        "recorder-1",
        True,
        Exit.submitted,
    )


async def test_prompts_come_from_templates_in_the_config(task, local):
    config = AgentConfig(
        system_prompt="Fix {repo} in {workdir}. {{literal}}",
        instance_prompt="Issue: {problem_statement}",
    )
    t = await run_agent(task, Recorder(), local, config)
    assert t.messages[0].content == f"Fix toy/calc in {local.workdir}. {{literal}}"
    assert t.messages[1].content == "Issue: `add(2, 3)` returns -1 instead of 5."
    with pytest.raises(UsageError, match=r"agent.instance_prompt: unknown field \{issue\}"):
        await run_agent(task, Recorder(), local, AgentConfig(instance_prompt="{issue}"))


async def test_cancellation_propagates(task, local, gpt, fake_api):
    fake_api.openai(slow(5, openai_completion("late")))
    attempt = asyncio.create_task(run_agent(task, gpt, local, CONFIG))
    await asyncio.sleep(0.3)
    attempt.cancel()
    with pytest.raises(asyncio.CancelledError):
        await attempt


def test_arguments_in_requests_are_the_json_text_received(task):
    # Guard for as_sent: tool-call arguments stay JSON strings in the OpenAI layout.
    m = Message(
        role="assistant", tool_calls=[ToolCall(id="1", name="bash", arguments='{"command": "ls"}')]
    )
    assert json.loads(as_sent([m])[0]["tool_calls"][0]["function"]["arguments"]) == {
        "command": "ls"
    }
