"""The Anthropic teacher against the stand-in server, through the unmodified SDK."""

from __future__ import annotations

import pytest

from factory.records import Message, ToolCall
from factory.teachers import AnthropicConfig, AnthropicTeacher
from tests.teachers.fake_api import anthropic_message
from tests.teachers.samples import CONVERSATION, FAKE_KEY, TOOLS


async def test_tool_calls_text_and_usage_come_back(claude, fake_api):
    fake_api.anthropic(
        anthropic_message(
            "Running the tests.",
            tool_calls=[{"id": "toolu_a", "name": "bash", "input": {"cmd": "pytest -x"}}],
            usage={
                "input_tokens": 1200,
                "output_tokens": 80,
                "cache_read_input_tokens": 3000,
                "cache_creation_input_tokens": 500,
            },
        )
    )
    completion = await claude.complete(CONVERSATION, TOOLS)

    assert completion.message == Message(
        role="assistant",
        content="Running the tests.",
        tool_calls=[ToolCall(id="toolu_a", name="bash", arguments='{"cmd": "pytest -x"}')],
    )
    assert completion.stop_reason == "tool_calls"
    assert completion.usage.model_dump() == {
        "input_tokens": 1200,
        "output_tokens": 80,
        "cache_read_tokens": 3000,
        "cache_write_tokens": 500,
    }
    # claude-sonnet-5-5: $2 in, $10 out, $0.20 cache read, $2.50 cache write per million
    assert completion.cost_usd == pytest.approx((1200 * 2 + 80 * 10 + 3000 * 0.2 + 500 * 2.5) / 1e6)
    assert completion.retries == 0


async def test_request_carries_cache_breakpoints_and_anthropic_layout(claude, fake_api):
    fake_api.anthropic(anthropic_message("ok"))
    await claude.complete(CONVERSATION, TOOLS)

    (request,) = fake_api.requests
    body = request.body
    assert request.path == "/v1/messages"
    assert body["model"] == "claude-sonnet-5-5"
    assert body["max_tokens"] == 8192
    assert body["system"] == [
        {"type": "text", "text": "You fix bugs.", "cache_control": {"type": "ephemeral"}}
    ]
    assert [t["name"] for t in body["tools"]] == ["bash", "submit"]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "thinking" not in body and "temperature" not in body


async def test_prompt_caching_can_be_turned_off(fake_api):
    teacher = AnthropicTeacher(
        AnthropicConfig(
            model="claude-haiku-4-5",
            base_url=fake_api.anthropic_url,
            api_key=FAKE_KEY,
            prompt_caching=False,
        )
    )
    fake_api.anthropic(anthropic_message("ok"))
    await teacher.complete(CONVERSATION, TOOLS)
    await teacher.aclose()

    assert "cache_control" not in fake_api.requests[0].raw


async def test_thinking_is_requested_kept_and_sent_back(fake_api):
    teacher = AnthropicTeacher(
        AnthropicConfig(
            model="claude-haiku-4-5",
            base_url=fake_api.anthropic_url,
            api_key=FAKE_KEY,
            max_tokens=16000,
            thinking_budget=4000,
        )
    )
    fake_api.anthropic(
        anthropic_message(
            "",
            thinking="The bug is in parse().",
            signature="sig-123",
            tool_calls=[{"id": "t1", "name": "bash", "input": {"cmd": "ls"}}],
        ),
        anthropic_message("Done."),
    )
    first = await teacher.complete(CONVERSATION, TOOLS)
    assert first.message.reasoning == "The bug is in parse()."
    thinking = {"type": "thinking", "thinking": "The bug is in parse().", "signature": "sig-123"}
    tool_use = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}}
    assert first.message.provider_blocks == [thinking, tool_use]

    history = [
        *CONVERSATION,
        first.message,
        Message(role="tool", tool_call_id="t1", content="a.py"),
    ]
    await teacher.complete(history, TOOLS)
    await teacher.aclose()

    first_body, second_body = (r.body for r in fake_api.requests)
    assert first_body["thinking"] == {
        "type": "enabled",
        "budget_tokens": 4000,
        "display": "summarized",
    }
    assistant = second_body["messages"][1]
    assert assistant == {"role": "assistant", "content": [thinking, tool_use]}


async def test_adaptive_thinking_and_effort_reach_the_request(fake_api):
    teacher = AnthropicTeacher(
        AnthropicConfig(
            model="claude-opus-5-5",
            base_url=fake_api.anthropic_url,
            api_key=FAKE_KEY,
            thinking="adaptive",
            effort="high",
        )
    )
    fake_api.anthropic(anthropic_message("ok"))
    await teacher.complete(CONVERSATION, TOOLS)
    await teacher.aclose()

    body = fake_api.requests[0].body
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "high"}


async def test_temperature_and_extra_body_reach_the_request(fake_api):
    teacher = AnthropicTeacher(
        AnthropicConfig(
            model="claude-haiku-4-5",
            base_url=fake_api.anthropic_url,
            api_key=FAKE_KEY,
            temperature=0.3,
            extra_body={"top_k": 40},
        )
    )
    fake_api.anthropic(anthropic_message("ok"))
    await teacher.complete(CONVERSATION, [])
    await teacher.aclose()

    body = fake_api.requests[0].body
    assert body["temperature"] == 0.3
    assert body["top_k"] == 40
    assert "tools" not in body


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("end_turn", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("pause_turn", "pause_turn"),
    ],
)
async def test_stop_reasons_use_the_openai_words(claude, fake_api, stop, expected):
    fake_api.anthropic(anthropic_message("x", stop_reason=stop))

    assert (await claude.complete(CONVERSATION, TOOLS)).stop_reason == expected


def test_thinking_config_is_checked():
    with pytest.raises(ValueError, match="less than max_tokens"):
        AnthropicConfig(model="m", max_tokens=2000, thinking_budget=4000)
    with pytest.raises(ValueError, match="temperature"):
        AnthropicConfig(model="m", thinking="adaptive", temperature=0.2)
    with pytest.raises(ValueError, match="thinking_budget"):
        AnthropicConfig(model="m", thinking="enabled")
    assert AnthropicConfig(model="m", thinking_budget=2000).thinking == "enabled"
    assert AnthropicConfig(model="m", thinking="disabled").thinking_param() == {"type": "disabled"}
