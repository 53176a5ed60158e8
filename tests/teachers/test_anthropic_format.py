"""Our OpenAI-layout messages ⇄ Anthropic content blocks."""

from __future__ import annotations

import pytest

from factory.records import Message, ToolCall
from factory.teachers.anthropic_format import (
    RAW_ARGUMENTS,
    anthropic_tools,
    from_anthropic,
    from_anthropic_content,
    to_anthropic,
)
from tests.teachers.samples import TOOLS

THINKING = {
    "type": "thinking",
    "thinking": "Look at the parser first.",
    "signature": "EqQBCkYIARgCIkAsig",
}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}


def conversation() -> list[Message]:
    return [
        Message(role="system", content="You fix bugs."),
        Message(role="user", content="Fix the failing test."),
        from_anthropic_content(
            [
                THINKING,
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"cmd": "ls"}},
                {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {"cmd": "cat é.py"}},
            ]
        ),
        Message(role="tool", tool_call_id="toolu_1", content="a.py\né.py"),
        Message(role="tool", tool_call_id="toolu_2", content=""),
        Message(
            role="assistant",
            content="",
            tool_calls=[ToolCall(id="toolu_3", name="submit", arguments="{}")],
        ),
        Message(role="tool", tool_call_id="toolu_3", content="submitted"),
    ]


def strip_cache(value):
    if isinstance(value, dict):
        return {k: strip_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache(v) for v in value]
    return value


@pytest.mark.parametrize("cache", [True, False])
def test_a_conversation_round_trips(cache):
    messages = conversation()
    system, turns, _ = to_anthropic(messages, TOOLS, cache=cache)

    assert from_anthropic(strip_cache(system), strip_cache(turns)) == messages


def test_layout_of_each_kind_of_message():
    system, turns, tools = to_anthropic(conversation(), TOOLS, cache=False)

    assert system == [{"type": "text", "text": "You fix bugs."}]
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    assistant = turns[1]["content"]
    assert assistant[0] == THINKING  # thinking first, signature intact
    assert assistant[1] == {"type": "text", "text": "Let me look."}
    assert assistant[2] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "bash",
        "input": {"cmd": "ls"},
    }
    assert assistant[3]["input"] == {"cmd": "cat é.py"}
    # consecutive tool messages → one user message of tool_result blocks
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py\né.py"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": ""},
    ]
    # an assistant turn with only tool calls has no empty text block
    assert turns[3]["content"] == [
        {"type": "tool_use", "id": "toolu_3", "name": "submit", "input": {}}
    ]
    assert tools[0] == {
        "name": "bash",
        "description": "Run a shell command.",
        "input_schema": TOOLS[0]["function"]["parameters"],
    }


def test_cache_breakpoints_on_tools_system_and_end_of_conversation():
    system, turns, tools = to_anthropic(conversation(), TOOLS)

    marked = [
        block
        for blocks in (tools, system, *[t["content"] for t in turns])
        for block in blocks
        if "cache_control" in block
    ]
    assert len(marked) == 3  # Anthropic allows four
    assert tools[-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in tools[0]
    assert system[-1]["cache_control"] == {"type": "ephemeral"}
    assert turns[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_cache_breakpoint_never_lands_on_a_thinking_block():
    messages = [
        Message(role="user", content="hi"),
        Message(role="assistant", content="", provider_blocks=[THINKING]),
    ]
    _, turns, _ = to_anthropic(messages)

    assert "cache_control" not in turns[1]["content"][0]
    assert turns[0]["content"][0]["cache_control"] == {"type": "ephemeral"}


def test_a_response_becomes_our_message():
    blocks = [
        THINKING,
        REDACTED,
        {"type": "text", "text": "I will run the tests."},
        {
            "type": "tool_use",
            "id": "toolu_9",
            "name": "bash",
            "input": {"cmd": "pytest -q", "n": 1.5},
        },
    ]
    message = from_anthropic_content(blocks)

    assert message.content == "I will run the tests."
    assert message.reasoning == "Look at the parser first."
    assert message.provider_blocks == blocks
    assert message.tool_calls == [
        ToolCall(id="toolu_9", name="bash", arguments='{"cmd": "pytest -q", "n": 1.5}')
    ]
    # and back: the same blocks, in the order Anthropic wants them
    _, turns, _ = to_anthropic([Message(role="user", content="go"), message], cache=False)
    assert turns[1]["content"] == blocks


@pytest.mark.parametrize(
    "arguments", ['{"cmd": "ls"', "[1, 2]", '"ls"', "", '{"__raw_arguments__": "x"}']
)
def test_tool_call_arguments_that_are_not_a_json_object_round_trip(arguments):
    message = Message(
        role="assistant",
        content="",
        tool_calls=[ToolCall(id="t1", name="bash", arguments=arguments)],
    )
    _, turns, _ = to_anthropic([Message(role="user", content="go"), message], cache=False)

    block = turns[1]["content"][0]
    assert isinstance(block["input"], dict)
    assert block["input"] == {RAW_ARGUMENTS: arguments}
    assert from_anthropic_content(turns[1]["content"]).tool_calls[0].arguments == arguments


def test_reasoning_without_signed_blocks_is_not_sent():
    message = Message(role="assistant", content="done", reasoning="from another provider")
    _, turns, _ = to_anthropic([Message(role="user", content="go"), message], cache=False)

    assert turns[1]["content"] == [{"type": "text", "text": "done"}]


def test_a_user_message_after_tool_results_joins_their_turn():
    messages = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=[ToolCall(id="t1", name="bash", arguments="{}")]),
        Message(role="tool", tool_call_id="t1", content="ok"),
        Message(role="user", content="Please also add a test."),
    ]
    _, turns, _ = to_anthropic(messages, cache=False)

    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert [b["type"] for b in turns[2]["content"]] == ["tool_result", "text"]
    assert from_anthropic(None, turns) == messages


def test_a_tool_that_is_not_a_function_schema_is_refused_by_name():
    with pytest.raises(ValueError, match="tool #1"):
        anthropic_tools([TOOLS[0], {"name": "bash"}])


def test_interleaved_thinking_goes_back_in_its_own_order():
    blocks = [
        THINKING,
        {"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}},
        REDACTED,
        {"type": "tool_use", "id": "t2", "name": "bash", "input": {"cmd": "pwd"}},
    ]
    message = from_anthropic_content(blocks)
    _, turns, _ = to_anthropic([Message(role="user", content="go"), message], cache=False)

    assert turns[1]["content"] == blocks


def test_an_edited_turn_sends_its_thinking_first_then_its_own_text_and_calls():
    message = from_anthropic_content([THINKING, {"type": "text", "text": "old text"}])
    edited = message.model_copy(update={"content": "new text"})
    _, turns, _ = to_anthropic([Message(role="user", content="go"), edited], cache=False)

    assert turns[1]["content"] == [THINKING, {"type": "text", "text": "new text"}]


def test_provider_blocks_are_not_changed_by_cache_marking():
    message = from_anthropic_content([THINKING, {"type": "text", "text": "done"}])
    to_anthropic([Message(role="user", content="go"), message])

    assert message.provider_blocks == [THINKING, {"type": "text", "text": "done"}]
