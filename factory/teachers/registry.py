"""Teachers by `kind`: `TEACHERS` holds each kind's config class and builder.

    TEACHERS.add("scripted", TeacherKind(ScriptedConfig, ScriptedTeacher))
    teacher = build_teacher({"kind": "anthropic", "model": "claude-sonnet-4-5"})

`TeacherConfig` is the discriminated union of the built-in kinds' configs, for embedding in
a pipeline config (`teachers: list[TeacherConfig]`); `config_union()` makes the same union
over every kind registered so far (built-in ones and those added later). `register` and
`kinds` are the registry's `add` and `kinds`, kept for the callers that name them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field, ValidationError

from factory.errors import UsageError
from factory.protocols import Teacher
from factory.registry import Registry
from factory.teachers.anthropic import AnthropicConfig, AnthropicTeacher
from factory.teachers.openai import OpenAIConfig, OpenAITeacher

TeacherConfig = Annotated[AnthropicConfig | OpenAIConfig, Field(discriminator="kind")]


@dataclass(frozen=True)
class TeacherKind:
    config: type[BaseModel]
    """Validates the kind's config; it declares `kind: Literal[its kind]` to join `config_union()`."""
    build: Callable[[Any], Teacher]
    """The teacher from its validated config."""


TEACHERS: Registry[TeacherKind] = Registry("teacher kind")
TEACHERS.add("anthropic", TeacherKind(AnthropicConfig, AnthropicTeacher))
TEACHERS.add("openai", TeacherKind(OpenAIConfig, OpenAITeacher))


def register(kind: str, config_cls: type[BaseModel], factory: Callable[[Any], Teacher]) -> None:
    """Make `kind` buildable: `config_cls` validates its config, `factory(config)` builds it
    (again: it replaces the kind)."""
    TEACHERS.add(kind, TeacherKind(config_cls, factory))


def kinds() -> list[str]:
    return TEACHERS.kinds()


def config_union() -> Any:
    """The discriminated union (on `kind`) of every registered config class."""
    return TEACHERS.union(lambda entry: entry.config)


def build_teacher(config: BaseModel | Mapping[str, Any]) -> Teacher:
    """A teacher from its config: the kind's own config object, or any mapping or model
    with a `kind` (such as a pipeline's loosely typed teacher entry), validated here."""
    kind = config.get("kind") if isinstance(config, Mapping) else getattr(config, "kind", None)
    entry = TEACHERS.get(kind)
    if not isinstance(config, entry.config):
        data = (
            dict(config) if isinstance(config, Mapping) else config.model_dump(exclude_unset=True)
        )
        try:
            config = entry.config.model_validate({"kind": kind, **data})
        except ValidationError as exc:
            # Without input values: a mistyped field could hold an API key.
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or kind}: {e['msg']}"
                for e in exc.errors(include_input=False)
            )
            raise UsageError(f"teacher config of kind {kind!r}: {problems}") from None
    return entry.build(config)
