"""Claude through the Anthropic Messages API (the `anthropic` SDK), with tool use.

Prompt caching is on by default (breakpoints: tools, system, end of the conversation; see
anthropic_format.py) and the cache tokens are recorded. Extended thinking is optional; its
blocks are kept in `Message.provider_blocks` with their signatures and sent back unchanged,
as tool use with thinking requires.

Usage convention: `input_tokens` is Anthropic's own `input_tokens`, i.e. uncached input;
`cache_read_tokens` / `cache_write_tokens` are `cache_read_input_tokens` /
`cache_creation_input_tokens`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from factory.errors import TeacherFatal
from factory.records import Message, Usage
from factory.teachers.anthropic_format import STOP_REASONS, from_anthropic_content, to_anthropic
from factory.teachers.base import APITeacher, TeacherSettings
from factory.teachers.retry import Transient, parse_retry_after

if TYPE_CHECKING:  # the SDK loads with the first teacher, not with the package
    import anthropic


class AnthropicConfig(TeacherSettings):
    """A Claude teacher. Every field of `TeacherSettings` applies as well."""

    kind: Literal["anthropic"] = "anthropic"
    """Selects this teacher kind."""
    api_key_env: str = "ANTHROPIC_API_KEY"
    """Environment variable that holds the key when `api_key` is unset."""
    thinking: Literal["adaptive", "enabled", "disabled"] | None = None
    """`adaptive` (the model decides how much to think), `enabled` (a fixed
    `thinking_budget`), `disabled`; None sends nothing, so the model's default applies."""
    thinking_budget: int | None = Field(default=None, ge=1024)
    """Budget tokens for `enabled` thinking, less than max_tokens; alone it means `enabled`."""
    thinking_display: Literal["summarized", "omitted"] | None = "summarized"
    """How thinking comes back when `thinking` is adaptive or enabled: `summarized` keeps
    its text for the dataset, `omitted` returns only signatures; None = the model's default."""
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    """`output_config.effort` for models that take it; None = the model's default."""
    prompt_caching: bool = True
    """Put cache breakpoints on the tools, the system prompt and the conversation."""

    @model_validator(mode="after")
    def _thinking_fits(self) -> AnthropicConfig:
        if self.thinking is None and self.thinking_budget is not None:
            self.thinking = "enabled"
        if self.thinking == "enabled":
            if self.thinking_budget is None:
                raise ValueError("thinking: enabled needs a thinking_budget (or use adaptive)")
            if self.thinking_budget >= self.max_tokens:
                raise ValueError("thinking_budget must be less than max_tokens")
        if self.thinking in ("adaptive", "enabled") and self.temperature not in (None, 1.0):
            raise ValueError("thinking needs temperature unset (or 1)")
        return self

    def thinking_param(self) -> dict[str, Any] | None:
        if self.thinking is None:
            return None
        param: dict[str, Any] = {"type": self.thinking}
        if self.thinking == "enabled":
            param["budget_tokens"] = self.thinking_budget
        if self.thinking != "disabled" and self.thinking_display is not None:
            param["display"] = self.thinking_display
        return param


class AnthropicTeacher(APITeacher):
    provider = "Anthropic"

    def __init__(self, config: AnthropicConfig):
        key = config.resolve_api_key(required=config.base_url is None)
        super().__init__(config, api_key=key)
        self.config: AnthropicConfig = config
        import anthropic

        self.sdk = anthropic
        self.client = self.sdk.AsyncAnthropic(
            api_key=key or "none",
            base_url=config.base_url,
            timeout=config.timeout,
            max_retries=0,  # the one retry layer is ours (retry.py)
        )

    def build_request(self, messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
        try:
            system, turns, schemas = to_anthropic(messages, tools, cache=self.config.prompt_caching)
        except ValueError as exc:
            raise TeacherFatal(
                self._describe(str(exc), "pass OpenAI-style function schemas")
            ) from None
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.config.max_tokens,
            "messages": turns,
        }
        if system:
            request["system"] = system
        if schemas:
            request["tools"] = schemas
        if thinking := self.config.thinking_param():
            request["thinking"] = thinking
        if self.config.effort is not None:
            request["output_config"] = {"effort": self.config.effort}
        extra = dict(self.config.extra_body)
        if self.config.temperature is not None:
            extra.setdefault("temperature", self.config.temperature)
        if extra:
            request["extra_body"] = extra
        return request

    async def send(self, request: dict[str, Any]) -> anthropic.types.Message:
        return await self.client.messages.create(**request)

    def parse(self, response: anthropic.types.Message) -> tuple[Message, str, Usage | None]:
        blocks = [block.model_dump(exclude_none=True) for block in response.content]
        message = from_anthropic_content(blocks)
        stop = response.stop_reason or ""
        u = response.usage
        usage = Usage(
            input_tokens=u.input_tokens or 0,
            output_tokens=u.output_tokens or 0,
            cache_read_tokens=u.cache_read_input_tokens or 0,
            cache_write_tokens=u.cache_creation_input_tokens or 0,
        )
        return message, STOP_REASONS.get(stop, stop), usage

    def classify(self, exc: Exception) -> Transient | TeacherFatal | None:
        if isinstance(exc, self.sdk.APIStatusError):
            detail = exc.api_message or (str(exc.body)[:300] if exc.body else None)
            return self.status_error(
                exc.status_code, exc.type, detail, parse_retry_after(exc.response.headers)
            )
        if isinstance(exc, self.sdk.APIConnectionError):
            return self.connection_error(timed_out=isinstance(exc, self.sdk.APITimeoutError))
        if isinstance(exc, self.sdk.AnthropicError):
            return TeacherFatal(
                self._describe(f"{type(exc).__name__}: {exc}", "check the teacher config")
            )
        return None

    async def aclose(self) -> None:
        await self.client.close()
