"""`secrets`: find credentials in every message and redact them before anything is published.

Agents `cat` config files and print environments, so keys turn up in tool outputs, in
arguments and in patches. Every match is replaced by `[REDACTED:<kind>]` in message text,
reasoning, tool-call arguments (JSON kept valid), provider blocks and the patch; the row is
kept and flagged (or dropped, with `action: drop`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from factory.filters.base import BaseFilter, Drop, DropReason, FilterResult, Flag, FlagCode
from factory.records import Attempt, Message, ToolCall
from factory.section import Section

_WORD = r"A-Za-z0-9_"
PATTERNS: dict[str, str] = {
    "private_key": r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    "anthropic_api_key": rf"(?<![{_WORD}-])sk-ant-[{_WORD}-]{{20,}}",
    "openai_api_key": rf"(?<![{_WORD}-])sk-(?:proj-|svcacct-|admin-)?(?=[{_WORD}-]*[0-9])[{_WORD}-]{{20,}}",
    "hf_token": rf"(?<![{_WORD}])hf_[A-Za-z0-9]{{30,}}",
    "aws_access_key_id": r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])",
    "aws_secret_access_key": r"(?i:aws_secret_access_key|aws_secret_key|secret_access_key)[\"']?\s*[=:]\s*[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
    "google_api_key": rf"(?<![{_WORD}])AIza[{_WORD}-]{{35}}",
    "github_token": rf"(?<![{_WORD}])(?:gh[pousr]_[A-Za-z0-9]{{36,}}|github_pat_[{_WORD}]{{22,}})",
    "slack_token": r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}",
    "stripe_key": rf"(?<![{_WORD}])(?:sk|rk)_live_[A-Za-z0-9]{{20,}}",
}
"""Kind -> regex. A pattern with a `secret` group redacts only that group (keeps `KEY=`)."""


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


class SecretsConfig(Section):
    enabled: bool = True
    """Run this filter (leave it on for anything that is published)."""
    action: Literal["redact", "drop"] = "redact"
    """`redact`: replace each secret and keep the row, flagged; `drop`: drop the row."""
    extra_patterns: dict[str, str] = Field(default_factory=dict)
    """More kinds to find: name -> Python regex (a `secret` group limits what is replaced)."""
    allow: list[str] = Field(default_factory=list)
    """Exact strings never redacted (e.g. a task's well-known fake test key)."""

    @field_validator("extra_patterns")
    @classmethod
    def _compiles(cls, patterns: dict[str, str]) -> dict[str, str]:
        for name, pattern in patterns.items():
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {name!r} is not a valid regex: {exc}") from exc
        return patterns


@dataclass
class SecretScanner:
    patterns: dict[str, re.Pattern[str]]
    allow: frozenset[str] = frozenset()

    @classmethod
    def from_config(cls, config: SecretsConfig | None = None) -> SecretScanner:
        config = config or SecretsConfig()
        merged = {**PATTERNS, **config.extra_patterns}
        return cls({k: re.compile(v) for k, v in merged.items()}, frozenset(config.allow))

    def redact(self, text: str) -> tuple[str, Counter[str]]:
        found: Counter[str] = Counter()
        for kind, pattern in self.patterns.items():
            text = pattern.sub(lambda m, kind=kind: self._replace(m, kind, found), text)
        return text, found

    def _replace(self, match: re.Match[str], kind: str, found: Counter[str]) -> str:
        group = "secret" if "secret" in match.re.groupindex and match.group("secret") is not None else 0
        if match.group(group) in self.allow:
            return match.group(0)
        found[kind] += 1
        if group == 0:
            return placeholder(kind)
        start, end = match.span(group)
        whole_start = match.start()
        return match.group(0)[: start - whole_start] + placeholder(kind) + match.group(0)[end - whole_start :]

    def redact_value(self, value: Any, found: Counter[str]) -> Any:
        """Strings anywhere inside lists and dicts."""
        if isinstance(value, str):
            text, hits = self.redact(value)
            found.update(hits)
            return text
        if isinstance(value, list):
            return [self.redact_value(v, found) for v in value]
        if isinstance(value, dict):
            return {k: self.redact_value(v, found) for k, v in value.items()}
        return value

    def redact_arguments(self, arguments: str, found: Counter[str]) -> str:
        """Tool-call arguments stay valid JSON; they are re-serialized only when something was found."""
        try:
            parsed = json.loads(arguments)
        except (json.JSONDecodeError, TypeError):
            return self.redact_value(arguments, found)
        hits: Counter[str] = Counter()
        redacted = self.redact_value(parsed, hits)
        if not hits:
            return arguments
        found.update(hits)
        return json.dumps(redacted, ensure_ascii=False)


def _where(index: int, message: Message) -> str:
    return f"messages[{index}] ({message.role})"


class SecretsFilter(BaseFilter):
    name: ClassVar[str] = "secrets"
    reasons: ClassVar[dict[str, str]] = {
        DropReason.secret_found: "contained a credential",
    }

    def __init__(self, config: SecretsConfig | None = None):
        self.config = config or SecretsConfig()
        self.scanner = SecretScanner.from_config(self.config)

    def _redact_message(self, message: Message, found: Counter[str]) -> Message:
        calls = [
            ToolCall(id=c.id, name=c.name, arguments=self.scanner.redact_arguments(c.arguments, found))
            for c in message.tool_calls
        ]
        return message.model_copy(
            update={
                "content": self.scanner.redact_value(message.content, found),
                "reasoning": self.scanner.redact_value(message.reasoning, found),
                "provider_blocks": self.scanner.redact_value(message.provider_blocks, found),
                "tool_calls": calls,
            }
        )

    def scan(self, attempt: Attempt) -> tuple[Attempt, Counter[str], list[str]]:
        """The attempt with every secret redacted, the kinds found, and where they were."""
        trajectory = attempt.trajectory
        if trajectory is None:
            return attempt, Counter(), []
        total: Counter[str] = Counter()
        places: list[str] = []
        messages = []
        for index, message in enumerate(trajectory.messages):
            found: Counter[str] = Counter()
            messages.append(self._redact_message(message, found))
            if found:
                places.append(_where(index, message))
                total.update(found)
        found = Counter()
        patch = self.scanner.redact_value(trajectory.patch, found)
        if found:
            places.append("patch")
            total.update(found)
        if not total:
            return attempt, total, places
        redacted = trajectory.model_copy(update={"messages": messages, "patch": patch})
        return attempt.model_copy(update={"trajectory": redacted}), total, places

    def run(self, attempts: list[Attempt]) -> FilterResult:
        result = FilterResult(kept=[])
        for attempt in attempts:
            redacted, found, places = self.scan(attempt)
            if not found:
                result.kept.append(attempt)
                continue
            kinds = ", ".join(f"{kind} x{n}" for kind, n in sorted(found.items()))
            shown = ", ".join(places[:8]) + (f" and {len(places) - 8} more" if len(places) > 8 else "")
            detail = f"{kinds} in {shown}"
            if self.config.action == "drop":
                result.drops.append(Drop(attempt.key, self.name, DropReason.secret_found, detail))
            else:
                result.kept.append(redacted)
                result.flags.append(Flag(attempt.key, self.name, FlagCode.secret_redacted, detail))
        return result
