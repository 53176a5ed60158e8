"""`record_tokens`: an OpenAI-compatible teacher asks its server (vLLM style) for the sampled
token ids, their logprobs and the prompt's ids, and keeps them on the completion."""

from __future__ import annotations

import logging

import pytest

from factory.records import SampledTokens
from factory.teachers import OpenAIConfig, OpenAITeacher
from tests.teachers.fake_api import openai_completion
from tests.teachers.samples import CONVERSATION, FAST, TOOLS


@pytest.fixture
async def vllm(fake_api):
    teacher = OpenAITeacher(OpenAIConfig(model="Qwen/Qwen3-8B", base_url=fake_api.openai_url,
                                         record_tokens=True, **FAST))
    yield teacher
    await teacher.aclose()


async def test_the_request_asks_for_ids_and_logprobs_and_the_answer_keeps_them(vllm, fake_api):
    fake_api.openai(openai_completion("done", token_ids=[5, 6, 151645], logprobs=[-0.5, -1.0, 0.0],
                                      prompt_token_ids=[1, 2, 3]))
    completion = await vllm.complete(CONVERSATION, TOOLS)

    body = fake_api.requests[0].body
    assert body["logprobs"] is True
    assert body["return_token_ids"] is True and body["return_tokens_as_token_ids"] is True
    assert completion.sampled == SampledTokens(completion_token_ids=[5, 6, 151645], logprobs=[-0.5, -1.0, 0.0],
                                               prompt_token_ids=[1, 2, 3])


async def test_ids_are_read_from_token_id_logprob_tokens_when_the_server_sends_no_id_field(vllm, fake_api):
    fake_api.openai(openai_completion("done", token_ids=[7, 8], logprobs=[-0.1, -0.2], ids_field=False))
    sampled = (await vllm.complete(CONVERSATION, TOOLS)).sampled

    assert sampled == SampledTokens(completion_token_ids=[7, 8], logprobs=[-0.1, -0.2], prompt_token_ids=None)


async def test_a_server_that_returns_no_ids_leaves_the_turn_without_them_and_says_so(vllm, fake_api, caplog):
    fake_api.openai(openai_completion("done"), openai_completion("again"))
    with caplog.at_level(logging.WARNING, logger="factory.teachers"):
        first = await vllm.complete(CONVERSATION, TOOLS)
        second = await vllm.complete(CONVERSATION, TOOLS)

    assert first.sampled is None and second.sampled is None
    assert first.message.content == "done"
    warned = [r for r in caplog.records if "no token ids" in r.getMessage()]
    assert len(warned) == 1  # once per teacher, not once per turn


async def test_extra_body_overrides_the_token_options(fake_api):
    teacher = OpenAITeacher(OpenAIConfig(model="m", base_url=fake_api.openai_url, record_tokens=True,
                                         extra_body={"return_token_ids": False}, **FAST))
    fake_api.openai(openai_completion("ok", token_ids=[1], ids_field=False))
    await teacher.complete(CONVERSATION, TOOLS)
    await teacher.aclose()

    body = fake_api.requests[0].body
    assert body["return_token_ids"] is False and body["return_tokens_as_token_ids"] is True


async def test_without_record_tokens_nothing_is_asked_or_kept(gpt, fake_api):
    fake_api.openai(openai_completion("ok", token_ids=[1, 2]))
    completion = await gpt.complete(CONVERSATION, TOOLS)

    body = fake_api.requests[0].body
    assert "logprobs" not in body and "return_token_ids" not in body
    assert completion.sampled is None
