"""Teachers built from config by kind, and the configs themselves."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from factory.errors import UsageError
from factory.records import Completion, Message
from factory.teachers import (
    AnthropicConfig,
    AnthropicTeacher,
    OpenAIConfig,
    OpenAITeacher,
    TeacherConfig,
    build_teacher,
    config_union,
    kinds,
    register,
    registry,
)
from tests.teachers.samples import FAKE_KEY


def test_builds_each_kind_from_a_mapping(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)

    claude = build_teacher({"kind": "anthropic", "model": "claude-sonnet-4-5", "name": "sonnet"})
    gpt = build_teacher({"kind": "openai", "model": "gpt-4.1"})

    assert isinstance(claude, AnthropicTeacher) and claude.name == "sonnet"
    assert isinstance(gpt, OpenAITeacher) and gpt.name == "gpt-4.1"


def test_an_unknown_kind_lists_the_valid_ones():
    with pytest.raises(
        UsageError, match="^unknown teacher kind 'gemini'; valid: anthropic, openai, scripted$"
    ):
        build_teacher({"kind": "gemini", "model": "x"})


def test_a_bad_field_is_named_without_echoing_its_value(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    with pytest.raises(UsageError) as caught:
        build_teacher({"kind": "anthropic", "model": "m", "apikey": FAKE_KEY})

    assert "apikey" in str(caught.value) and "Extra inputs" in str(caught.value)
    assert FAKE_KEY not in str(caught.value)


def test_the_union_picks_the_config_by_kind():
    adapter = TypeAdapter(list[TeacherConfig])
    configs = adapter.validate_python(
        [
            {"kind": "anthropic", "model": "claude-haiku-4-5", "thinking_budget": 2048},
            {"kind": "openai", "model": "gpt-5"},
        ]
    )

    assert [type(c) for c in configs] == [AnthropicConfig, OpenAIConfig]
    with pytest.raises(ValidationError, match="'anthropic', 'openai'"):
        adapter.validate_python([{"kind": "cohere", "model": "x"}])
    with pytest.raises(ValidationError, match="thinking_budget"):
        adapter.validate_python([{"kind": "openai", "model": "gpt-5", "thinking_budget": 2048}])


class EchoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["echo"] = "echo"
    model: str = "echo"
    name: str | None = None


class EchoTeacher:
    def __init__(self, config: EchoConfig):
        self.name, self.model = config.name or "echo", config.model

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion:
        return Completion(message=Message(role="assistant", content=messages[-1].content))


@pytest.fixture
def echo_registered(monkeypatch):
    monkeypatch.setattr(registry, "TEACHERS", registry.TEACHERS.copy())
    register("echo", EchoConfig, EchoTeacher)


async def test_the_registry_is_open(echo_registered):
    teacher = build_teacher({"kind": "echo", "name": "parrot"})

    assert {"anthropic", "echo", "openai", "scripted"} <= set(kinds())
    assert teacher.name == "parrot"
    assert (
        await teacher.complete([Message(role="user", content="hi")], [])
    ).message.content == "hi"
    union = TypeAdapter(list[config_union()])
    assert [
        type(c) for c in union.validate_python([{"kind": "echo"}, {"kind": "openai", "model": "m"}])
    ] == [EchoConfig, OpenAIConfig]


def test_a_loosely_typed_entry_is_validated_by_the_kinds_own_config(monkeypatch):
    class Entry(BaseModel):  # like a pipeline's teacher entry: kind, model, and extras
        model_config = ConfigDict(extra="allow")
        kind: str
        model: str

    teacher = build_teacher(
        Entry(kind="openai", model="m", base_url="http://127.0.0.1:9/v1", temperature=0.2)
    )
    assert isinstance(teacher, OpenAITeacher)
    assert teacher.config.temperature == 0.2


def test_the_key_comes_from_the_environment_and_stays_secret(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    config = AnthropicConfig(model="claude-sonnet-4-5")

    assert config.resolve_api_key(required=True) == FAKE_KEY
    assert FAKE_KEY not in repr(AnthropicConfig(model="m", api_key=FAKE_KEY))
    assert FAKE_KEY not in AnthropicConfig(model="m", api_key=FAKE_KEY).model_dump_json()


def test_another_variable_can_hold_the_key(monkeypatch):
    monkeypatch.setenv("TOGETHER_API_KEY", FAKE_KEY)
    config = OpenAIConfig(
        model="m", base_url="http://127.0.0.1:9/v1", api_key_env="TOGETHER_API_KEY"
    )

    assert config.resolve_api_key(required=False) == FAKE_KEY


def test_a_missing_key_for_the_real_api_is_a_usage_error(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY"):
        build_teacher({"kind": "anthropic", "model": "claude-sonnet-4-5"})


def test_configs_forbid_unknown_fields_and_document_every_field():
    with pytest.raises(ValidationError):
        OpenAIConfig(model="m", temprature=0.1)
    for cls in (AnthropicConfig, OpenAIConfig):
        undocumented = [name for name, field in cls.model_fields.items() if not field.description]
        assert undocumented == [], f"{cls.__name__} fields without a docstring: {undocumented}"
