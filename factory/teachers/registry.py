"""Teachers built from their config by `kind`. The registry is open: `register` adds a kind.

    register("scripted", ScriptedConfig, ScriptedTeacher)
    teacher = build_teacher({"kind": "anthropic", "model": "claude-sonnet-4-5"})

`TeacherConfig` is the discriminated union of the built-in kinds' configs, for embedding in
a pipeline config (`teachers: list[TeacherConfig]`); `config_union()` makes the same union
over every kind registered so far (built-in ones and those added by `register`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Union

from pydantic import BaseModel, Field, ValidationError

from factory.errors import UsageError
from factory.protocols import Teacher
from factory.teachers.anthropic import AnthropicConfig, AnthropicTeacher
from factory.teachers.openai import OpenAIConfig, OpenAITeacher

TeacherConfig = Annotated[AnthropicConfig | OpenAIConfig, Field(discriminator="kind")]

_KINDS: dict[str, tuple[type[BaseModel], Callable[[Any], Teacher]]] = {}


def register(kind: str, config_cls: type[BaseModel], factory: Callable[[Any], Teacher]) -> None:
    """Make `kind` buildable: `config_cls` validates its config, `factory(config)` builds it.

    `config_cls` needs a field `kind: Literal[kind]` to take part in `config_union()`.
    Registering a kind again replaces it.
    """
    _KINDS[kind] = (config_cls, factory)


def kinds() -> list[str]:
    return sorted(_KINDS)


def config_union() -> Any:
    """The discriminated union (on `kind`) of every registered config class."""
    classes = tuple(dict.fromkeys(cls for cls, _ in _KINDS.values()))
    if len(classes) == 1:
        return classes[0]
    return Annotated[Union[classes], Field(discriminator="kind")]  # noqa: UP007


def build_teacher(config: BaseModel | Mapping[str, Any]) -> Teacher:
    """A teacher from its config: the kind's own config object, or any mapping or model
    with a `kind` (such as a pipeline's loosely typed teacher entry), validated here."""
    kind = config.get("kind") if isinstance(config, Mapping) else getattr(config, "kind", None)
    if kind not in _KINDS:
        raise UsageError(f"unknown teacher kind {kind!r}; valid kinds: {', '.join(kinds())}")
    config_cls, factory = _KINDS[kind]
    if not isinstance(config, config_cls):
        data = (
            dict(config) if isinstance(config, Mapping) else config.model_dump(exclude_unset=True)
        )
        try:
            config = config_cls.model_validate({"kind": kind, **data})
        except ValidationError as exc:
            # Without input values: a mistyped field could hold an API key.
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or kind}: {e['msg']}"
                for e in exc.errors(include_input=False)
            )
            raise UsageError(f"teacher config of kind {kind!r}: {problems}") from None
    return factory(config)


register("anthropic", AnthropicConfig, AnthropicTeacher)
register("openai", OpenAIConfig, OpenAITeacher)
