"""The OpenAI teacher (and OpenAI-compatible servers) against the stand-in, through the SDK."""

from __future__ import annotations

import pytest

from factory.records import Message, ToolCall
from factory.teachers import OpenAIConfig, OpenAITeacher
from tests.teachers.fake_api import openai_completion
from tests.teachers.samples import CONVERSATION, FAKE_KEY, TOOLS


async def test_parallel_tool_calls_keep_their_arguments_exactly(gpt, fake_api):
    fake_api.openai(
        openai_completion(
            None,
            tool_calls=[
                {"id": "call_1", "name": "bash", "arguments": '{"cmd":"ls"}'},
                {
                    "id": "call_2",
                    "name": "bash",
                    "arguments": '{"cmd": "cat a.py", }',
                },  # invalid JSON
            ],
        )
    )
    completion = await gpt.complete(CONVERSATION, TOOLS)

    assert completion.message == Message(
        role="assistant",
        content="",
        tool_calls=[
            ToolCall(id="call_1", name="bash", arguments='{"cmd":"ls"}'),
            ToolCall(id="call_2", name="bash", arguments='{"cmd": "cat a.py", }'),
        ],
    )
    assert completion.stop_reason == "tool_calls"


async def test_request_is_our_openai_layout(gpt, fake_api):
    history = [
        *CONVERSATION,
        Message(
            role="assistant",
            reasoning="think",
            tool_calls=[ToolCall(id="c1", name="bash", arguments='{"cmd":"ls"}')],
        ),
        Message(role="tool", tool_call_id="c1", content="a.py"),
    ]
    fake_api.openai(openai_completion("done"))
    await gpt.complete(history, TOOLS)

    body = fake_api.requests[0].body
    assert fake_api.requests[0].path == "/v1/chat/completions"
    assert body["model"] == "gpt-4.1"
    assert body["tools"] == TOOLS
    assert body["messages"] == [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": "The tests fail; fix it."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"cmd":"ls"}'},
                }
            ],
        },
        {"role": "tool", "content": "a.py", "tool_call_id": "c1"},
    ]
    assert body["max_tokens"] == 8192  # a base_url means a compatible server
    assert "parallel_tool_calls" not in body and "temperature" not in body


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_fields_become_reasoning(gpt, fake_api, field):
    fake_api.openai(openai_completion("ok", reasoning="Check the parser.", reasoning_field=field))

    assert (await gpt.complete(CONVERSATION, TOOLS)).message.reasoning == "Check the parser."


async def test_reasoning_is_sent_back_only_when_asked(fake_api):
    history = [
        *CONVERSATION,
        Message(role="assistant", content="hm", reasoning="think"),
        Message(role="user", content="go on"),
    ]
    for send in (False, True):
        teacher = OpenAITeacher(
            OpenAIConfig(model="m", base_url=fake_api.openai_url, send_reasoning=send)
        )
        fake_api.openai(openai_completion("ok"))
        await teacher.complete(history, TOOLS)
        await teacher.aclose()

    without, with_ = (r.body["messages"][2] for r in fake_api.requests)
    assert "reasoning_content" not in without
    assert with_["reasoning_content"] == "think"


async def test_cached_tokens_are_cache_reads_and_priced(gpt, fake_api):
    fake_api.openai(
        openai_completion(
            "ok",
            usage={
                "prompt_tokens": 1000,
                "completion_tokens": 50,
                "prompt_tokens_details": {"cached_tokens": 800},
            },
        )
    )
    completion = await gpt.complete(CONVERSATION, TOOLS)

    assert completion.usage.model_dump() == {
        "input_tokens": 200,
        "output_tokens": 50,
        "cache_read_tokens": 800,
        "cache_write_tokens": 0,
    }
    # gpt-4.1: $2 in, $8 out, $0.50 cached per million
    assert completion.cost_usd == pytest.approx((200 * 2 + 50 * 8 + 800 * 0.5) / 1e6)


async def test_deepseek_style_cache_hits_count_too(gpt, fake_api):
    fake_api.openai(
        openai_completion(
            "ok",
            usage={"prompt_tokens": 100, "completion_tokens": 5, "prompt_cache_hit_tokens": 60},
        )
    )

    usage = (await gpt.complete(CONVERSATION, TOOLS)).usage
    assert (usage.input_tokens, usage.cache_read_tokens) == (40, 60)


async def test_a_compatible_server_needs_no_key(fake_api, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    teacher = OpenAITeacher(
        OpenAIConfig(
            model="Qwen/Qwen3-8B",
            base_url=fake_api.openai_url,
            temperature=0.6,
            parallel_tool_calls=True,
            extra_body={"chat_template_kwargs": {"enable_thinking": True}},
        )
    )
    fake_api.openai(openai_completion("ok"))
    completion = await teacher.complete(CONVERSATION, TOOLS)
    await teacher.aclose()

    request = fake_api.requests[0]
    assert request.headers["authorization"] == "Bearer EMPTY"
    assert request.body["temperature"] == 0.6
    assert request.body["parallel_tool_calls"] is True
    assert request.body["chat_template_kwargs"] == {"enable_thinking": True}
    assert completion.cost_usd is None  # no price for a local model: unknown, not 0


async def test_openai_itself_gets_max_completion_tokens(fake_api, monkeypatch):
    # No base_url means OpenAI itself; point the SDK at the stand-in through its own variable.
    monkeypatch.setenv("OPENAI_BASE_URL", fake_api.openai_url)
    teacher = OpenAITeacher(
        OpenAIConfig(model="o4-mini", api_key=FAKE_KEY, reasoning_effort="high", max_tokens=4000)
    )
    fake_api.openai(openai_completion("ok"))
    await teacher.complete(CONVERSATION, [])
    await teacher.aclose()

    body = fake_api.requests[0].body
    assert body["max_completion_tokens"] == 4000 and "max_tokens" not in body
    assert body["reasoning_effort"] == "high"
    assert "tools" not in body


async def test_a_tool_call_without_an_id_gets_one(gpt, fake_api):
    fake_api.openai(openai_completion(tool_calls=[{"id": "", "name": "submit", "arguments": "{}"}]))

    (call,) = (await gpt.complete(CONVERSATION, TOOLS)).message.tool_calls
    assert call.id.startswith("call_") and len(call.id) > 5
