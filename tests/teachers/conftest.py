"""The stand-in Anthropic / OpenAI server, and teachers pointed at it with fast retries."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from factory.teachers import AnthropicConfig, AnthropicTeacher, OpenAIConfig, OpenAITeacher
from tests.teachers.fake_api import FakeAPI
from tests.teachers.samples import FAKE_KEY, FAST


@pytest.fixture
def fake_api() -> Iterator[FakeAPI]:
    with FakeAPI() as api:
        yield api


@pytest.fixture
async def claude(fake_api: FakeAPI) -> AsyncIterator[AnthropicTeacher]:
    teacher = AnthropicTeacher(
        AnthropicConfig(
            model="claude-sonnet-5-5", base_url=fake_api.anthropic_url, api_key=FAKE_KEY, **FAST
        )
    )
    yield teacher
    await teacher.aclose()


@pytest.fixture
async def gpt(fake_api: FakeAPI) -> AsyncIterator[OpenAITeacher]:
    teacher = OpenAITeacher(
        OpenAIConfig(model="gpt-4.1", base_url=fake_api.openai_url, api_key=FAKE_KEY, **FAST)
    )
    yield teacher
    await teacher.aclose()
