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

import logging
import uuid
from typing import Any, Literal

from factory.errors import TeacherFatal
from factory.records import Message, SampledTokens, ToolCall, Usage
from factory.teachers.base import APITeacher, TeacherSettings
from factory.teachers.retry import Transient, parse_retry_after

log = logging.getLogger("factory.teachers")

TOKEN_ID_OPTIONS = {"return_token_ids": True, "return_tokens_as_token_ids": True}
"""vLLM's request extensions: the prompt's and the sample's ids in the answer (`prompt_token_ids`,
`choices[].token_ids`), and logprob tokens written `token_id:N` rather than as text."""


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
    record_tokens: bool = False
    """Ask the server for the token ids it sampled, their logprobs and the prompt's ids, and keep
    them on each turn (`Turn.sampled`) for RL rollouts (`factory export --format rollouts`). Sends
    `logprobs: true` and, in the body, vLLM's `return_token_ids` and `return_tokens_as_token_ids`
    (`extra_body` can override them); for vLLM and servers that speak its extensions, not OpenAI."""


class OpenAITeacher(APITeacher):
    provider = "OpenAI"

    def __init__(self, config: OpenAIConfig):
        key = config.resolve_api_key(required=config.base_url is None)
        super().__init__(config, api_key=key)
        self.config: OpenAIConfig = config
        import openai  # loaded with the first teacher, not with the package

        self.sdk = openai
        self._warned_no_ids = False
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
        if config.record_tokens:
            request["logprobs"] = True
        extra = {**(TOKEN_ID_OPTIONS if config.record_tokens else {}), **config.extra_body}
        if extra:
            request["extra_body"] = extra
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

    def sampled(self, response: Any) -> SampledTokens | None:
        if not self.config.record_tokens or not response.choices:
            return None
        tokens = sampled_tokens(response)
        if tokens is None and not self._warned_no_ids:
            self._warned_no_ids = True
            log.warning("%s", self._describe(
                "record_tokens is on but the answer holds no token ids (no `token_ids`, no "
                "`token_id:N` logprob tokens); its turns are recorded without them",
                "serve it with vLLM, or an engine that honours return_token_ids"))
        return tokens

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


def sampled_tokens(response: Any) -> SampledTokens | None:
    """The first choice's sampled ids (`token_ids`, else the `token_id:N` logprob tokens), their
    logprobs and the prompt's ids (`prompt_token_ids` on the answer or the choice); None without ids."""
    choice = response.choices[0]
    content = (choice.logprobs.content or []) if choice.logprobs is not None else []
    extra = choice.model_extra or {}
    ids = extra.get("token_ids")
    if ids is None and content:
        ids = [_token_id(entry.token) for entry in content]
        ids = None if None in ids else ids
    if ids is None:
        return None
    prompt = (response.model_extra or {}).get("prompt_token_ids") or extra.get("prompt_token_ids")
    return SampledTokens(
        completion_token_ids=ids,
        logprobs=[entry.logprob for entry in content] or None,
        prompt_token_ids=prompt,
    )


def _token_id(token: str) -> int | None:
    """`token_id:42` -> 42 (vLLM's `return_tokens_as_token_ids`); None for a token given as text."""
    prefix, _, number = token.partition(":")
    return int(number) if prefix == "token_id" and number.lstrip("-").isdigit() else None
