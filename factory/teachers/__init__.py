"""Teachers: models that write one assistant turn from messages and tool schemas.

    build_teacher(config) ─► Teacher.complete(messages, tools) ─► Completion
                              │
        APITeacher (base.py): limiter slot ─► SDK call ─► errors translated
                              └─ retried by RetryPolicy (retry.py), priced (prices.py)

Kinds: `anthropic` (Messages API), `openai` (Chat Completions, and OpenAI-compatible servers
through `base_url`) and the offline `scripted`; another is its module and one
`TEACHERS.add(kind, TeacherKind(Config, build))`. Tests point them at a local stand-in of
both HTTP APIs (`tests/teachers/fake_api.py`), never at a patched client.
"""

from factory.teachers.anthropic import AnthropicConfig, AnthropicTeacher
from factory.teachers.base import APITeacher, TeacherSettings, TeacherStats
from factory.teachers.limits import RateLimiter
from factory.teachers.openai import OpenAIConfig, OpenAITeacher
from factory.teachers.prices import PRICES, Price, cost_usd
from factory.teachers.registry import (
    TEACHERS,
    TeacherConfig,
    TeacherKind,
    build_teacher,
    config_union,
    kinds,
    register,
)
from factory.teachers.retry import RetryPolicy
from factory.teachers.scripted import ScriptedConfig, ScriptedProfile, ScriptedTeacher  # noqa: F401  (registers `scripted`)

__all__ = [
    "PRICES",
    "APITeacher",
    "AnthropicConfig",
    "AnthropicTeacher",
    "OpenAIConfig",
    "OpenAITeacher",
    "Price",
    "RateLimiter",
    "RetryPolicy",
    "TEACHERS",
    "TeacherConfig",
    "TeacherKind",
    "TeacherSettings",
    "TeacherStats",
    "build_teacher",
    "config_union",
    "cost_usd",
    "kinds",
    "register",
]
