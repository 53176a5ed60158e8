"""GPT, and any OpenAI-compatible server (vLLM, SGLang, Ollama…), via Chat Completions.

Requests are our messages' own OpenAI layout (`Message.to_openai`), so nothing is lost on
the way out. Several tool calls in one answer (parallel tool calls) all become `ToolCall`s,
their `arguments` kept exactly as the server sent them. Servers that return reasoning put
it in `reasoning_content` (vLLM, SGLang, DeepSeek) or `reasoning` (newer vLLM, Ollama,
OpenRouter); either becomes `Message.reasoning`.

Usage convention: `input_tokens` is uncached input, `prompt_tokens` minus
`prompt_tokens_details.cached_tokens` (or DeepSeek's `prompt_cache_hit_tokens`), and the
cached part is `cache_read_tokens`; OpenAI reports no cache writes, so those stay 0.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from factory.errors import TeacherFatal
from factory.records import Message, ToolCall, Usage
from factory.teachers.base import APITeacher, TeacherSettings
from factory.teachers.retry import Transient, parse_retry_after


class OpenAIConfig(TeacherSettings):
    """An OpenAI or OpenAI-compatible teacher. Every field of `TeacherSettings` applies too."""

    kind: Literal["openai"] = "openai"
    """Selects this teacher kind."""
    api_key_env: str = "OPENAI_API_KEY"
    """Environment variable that holds the key when `api_key` is unset (a server at
    `base_url` may need no key at all)."""
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] | None = None
    """Request field that carries max_tokens; None = `max_completion_tokens` for OpenAI
    itself (o-series and gpt-5 refuse the other), `max_tokens` when base_url is set."""
    parallel_tool_calls: bool | None = None
    """Allow several tool calls per answer; None leaves the server default (OpenAI: on)."""
    reasoning_effort: str | None = None
    """`minimal`, `low`, `medium` or `high` for reasoning models; None = server default."""
    send_reasoning: bool = False
    """Send earlier turns' reasoning back as `reasoning_content` (some servers need it for
    tool use while thinking; OpenAI and older DeepSeek APIs refuse it)."""


class OpenAITeacher(APITeacher):
    provider = "OpenAI"

    def __init__(self, config: OpenAIConfig):
        key = config.resolve_api_key(required=config.base_url is None)
        super().__init__(config, api_key=key)
        self.config: OpenAIConfig = config
        import openai  # loaded with the first teacher, not with the package

        self.sdk = openai
        self.client = self.sdk.AsyncOpenAI(
            api_key=key or "EMPTY",  # the placeholder vLLM and friends expect
            base_url=config.base_url,
            timeout=config.timeout,
            max_retries=0,  # the one retry layer is ours (retry.py)
        )

    def build_request(self, messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
        config = self.config
        field = config.max_tokens_field or (
            "max_tokens" if config.base_url else "max_completion_tokens"
        )
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [self._layout(m) for m in messages],
            field: config.max_tokens,
        }
        if tools:
            request["tools"] = tools
            if config.parallel_tool_calls is not None:
                request["parallel_tool_calls"] = config.parallel_tool_calls
        if config.temperature is not None:
            request["temperature"] = config.temperature
        if config.reasoning_effort is not None:
            request["reasoning_effort"] = config.reasoning_effort
        if config.extra_body:
            request["extra_body"] = dict(config.extra_body)
        return request

    def _layout(self, message: Message) -> dict[str, Any]:
        out = message.to_openai()
        if not self.config.send_reasoning:
            out.pop("reasoning_content", None)
        if message.role == "assistant" and message.tool_calls and not message.content:
            out["content"] = None
        return out

    async def send(self, request: dict[str, Any]) -> Any:
        return await self.client.chat.completions.create(**request)

    def parse(self, response: Any) -> tuple[Message, str, Usage | None]:
        if not response.choices:
            raise TeacherFatal(
                self._describe("the answer has no choices", "check the server at base_url")
            )
        choice = response.choices[0]
        reply = choice.message
        extra = reply.model_extra or {}
        reasoning = extra.get("reasoning_content") or extra.get("reasoning")
        calls = [
            ToolCall(
                id=call.id or f"call_{uuid.uuid4().hex[:24]}",
                name=call.function.name,
                arguments=call.function.arguments or "",
            )
            for call in reply.tool_calls or []
            if getattr(call, "function", None) is not None
        ]
        message = Message(
            role="assistant",
            content=reply.content or "",
            reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
            tool_calls=calls,
        )
        return message, choice.finish_reason or "", _usage(response.usage)

    def classify(self, exc: Exception) -> Transient | TeacherFatal | None:
        if isinstance(exc, self.sdk.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            detail = body.get("message") or (str(exc.body)[:300] if exc.body else None)
            kind = exc.code or exc.type
            return self.status_error(
                exc.status_code, kind, detail, parse_retry_after(exc.response.headers)
            )
        if isinstance(exc, self.sdk.APIConnectionError):
            return self.connection_error(timed_out=isinstance(exc, self.sdk.APITimeoutError))
        if isinstance(exc, self.sdk.OpenAIError):
            return TeacherFatal(
                self._describe(f"{type(exc).__name__}: {exc}", "check the teacher config")
            )
        return None

    async def aclose(self) -> None:
        await self.client.close()


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    prompt = usage.prompt_tokens or 0
    details = usage.prompt_tokens_details
    cached = (
        (details.cached_tokens if details else None)
        or (usage.model_extra or {}).get("prompt_cache_hit_tokens")
        or 0
    )
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=usage.completion_tokens or 0,
        cache_read_tokens=cached,
    )
