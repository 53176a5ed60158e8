"""What the HTTP teachers share: settings, limits, the retry loop, timing, cost, errors.

A provider module (anthropic.py, openai.py) writes four things: the request from our
messages, the SDK call, the reply back into a `Message`, and which SDK errors mean what.
`APITeacher.complete` does the rest, in this order for each try: wait for a limiter slot,
send, translate an SDK error where it enters (`Transient` → retried, anything else →
`TeacherFatal` at once). Out of tries, the last `Transient` becomes a `TeacherError`.

API keys: held as `SecretStr` until the SDK client is built; every message we build from a
server's answer is scrubbed of the key, and SDK exceptions are not chained into ours
(`from None`), because their text and their request objects can carry the key.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from factory.errors import TeacherError, TeacherFatal, UsageError
from factory.records import Completion, Message, SampledTokens, Usage
from factory.teachers.label import teacher_label
from factory.teachers.limits import RateLimiter
from factory.teachers.prices import Price, cost_usd
from factory.teachers.retry import RetryEvent, RetryPolicy, Transient

log = logging.getLogger("factory.teachers")

CONTEXT_LENGTH_HINTS = (
    "context length",
    "context_length",
    "context window",
    "maximum context",
    "prompt is too long",
    "too many tokens",
)


class TeacherSettings(BaseModel):
    """Fields every HTTP teacher has; each kind's config adds its own and a `kind` tag."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    model: str
    """Model name as the API knows it, e.g. `claude-sonnet-4-5` or `gpt-4.1`."""
    name: str | None = None
    """Name of this teacher in trajectories and the warehouse; defaults to `model`."""
    base_url: str | None = None
    """API root; None means the provider's own (or the SDK's `*_BASE_URL` variable)."""
    api_key: SecretStr | None = None
    """The key itself. Better left unset: it is then read from `api_key_env`."""
    api_key_env: str = ""
    """Environment variable that holds the key when `api_key` is unset."""
    max_tokens: int = Field(default=8192, gt=0)
    """Most tokens one assistant turn may produce (thinking included)."""
    temperature: float | None = None
    """Sampling temperature; None leaves the server default."""
    timeout: float = Field(default=600.0, gt=0)
    """Seconds one HTTP request may take before it counts as timed out (and is retried)."""
    max_retries: int = Field(default=6, ge=0)
    """Retries after the first try, for 408/409/429/5xx/529, timeouts and dropped connections."""
    backoff_initial: float = Field(default=1.0, ge=0)
    """First backoff wait in seconds; it doubles on each retry."""
    backoff_max: float = Field(default=60.0, ge=0)
    """Longest backoff wait in seconds."""
    backoff_jitter: float = Field(default=1.0, ge=0)
    """Random seconds (uniform 0..jitter) added to each backoff wait."""
    retry_after_max: float = Field(default=120.0, ge=0)
    """Cap in seconds on a server's `retry-after` / `retry-after-ms`."""
    concurrency: int = Field(default=8, gt=0)
    """Requests of this teacher in flight at once."""
    rpm: float | None = Field(default=None, gt=0)
    """Requests per minute; None = no limit."""
    tpm: float | None = Field(default=None, gt=0)
    """Tokens (input + output) per minute; None = no limit."""
    slowdown_seconds: float = Field(default=60.0, ge=0)
    """After a 429, rate and concurrency stay halved until this long passes without another."""
    price: Price | None = None
    """USD per million tokens, overriding the built-in table (prices.py)."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Extra JSON fields sent with every request (server-specific options)."""

    def resolve_api_key(self, *, required: bool) -> str | None:
        if self.api_key is not None and self.api_key.get_secret_value():
            return self.api_key.get_secret_value()
        if self.api_key_env and (value := os.environ.get(self.api_key_env)):
            return value
        if required:
            raise UsageError(
                f"teacher {teacher_label(self)!r}: no API key; set {self.api_key_env or 'api_key_env'} "
                "in the environment (or give base_url for a server that needs none)"
            )
        return None


@dataclass
class TeacherStats:
    """Counters that add up over a teacher's life; read them for run summaries."""

    calls: int = 0
    failures: int = 0
    retries: int = 0
    rate_limited: int = 0
    retry_waits: list[float] = field(default_factory=list)
    """Seconds waited before each retry, in order (the last 1000)."""


class APITeacher:
    """Base of the HTTP teachers; a provider subclass writes the four hooks below."""

    provider = ""
    """Name used in messages, e.g. 'Anthropic'."""

    def __init__(self, config: TeacherSettings, *, api_key: str | None):
        self.config = config
        self.name = teacher_label(config)
        self.model = config.model
        self._secret = api_key
        self.stats = TeacherStats()
        self.limiter = RateLimiter(
            concurrency=config.concurrency,
            rpm=config.rpm,
            tpm=config.tpm,
            slowdown_seconds=config.slowdown_seconds,
        )
        self.retry = RetryPolicy(
            max_retries=config.max_retries,
            backoff_initial=config.backoff_initial,
            backoff_max=config.backoff_max,
            jitter=config.backoff_jitter,
            retry_after_max=config.retry_after_max,
        )

    # -- the hooks a provider writes ---------------------------------------------------

    def build_request(self, messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
        raise NotImplementedError

    async def send(self, request: dict[str, Any]) -> Any:
        raise NotImplementedError

    def parse(self, response: Any) -> tuple[Message, str, Usage | None]:
        """The assistant message, the stop reason, and usage (None when the server gave none)."""
        raise NotImplementedError

    def classify(self, exc: Exception) -> Transient | TeacherFatal | None:
        """What an exception from `send` means; None for one that is not the SDK's."""
        raise NotImplementedError

    def sampled(self, response: Any) -> SampledTokens | None:
        """The token ids and logprobs the server sampled, for a teacher that asks for them."""
        return None

    async def aclose(self) -> None:
        """Close the SDK client's connections."""

    # -- the shared loop ---------------------------------------------------------------

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion:
        request = self.build_request(messages, tools)
        estimate = len(json.dumps(request, ensure_ascii=False)) // 4
        started = time.monotonic()
        self.stats.calls += 1

        async def attempt() -> Any:
            async with self.limiter.slot(estimate):
                try:
                    return await self.send(request)
                except Exception as exc:
                    translated = self.classify(exc)
                    if translated is None:
                        raise
                    if isinstance(translated, Transient) and translated.rate_limited:
                        self.stats.rate_limited += 1
                        pause = translated.retry_after
                        self.limiter.rate_limited(pause and min(pause, self.retry.retry_after_max))
                    raise translated from None

        try:
            response, retries = await self.retry.run(attempt, on_retry=self._on_retry)
        except Transient as exc:
            self.stats.failures += 1
            raise TeacherError(
                self._describe(
                    f"{exc.what}, still failing after {self.retry.max_retries} retries",
                    _what_to_do(exc.status),
                )
            ) from None
        except TeacherFatal:
            self.stats.failures += 1
            raise
        try:
            message, stop_reason, usage = self.parse(response)
            sampled = self.sampled(response)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            self.stats.failures += 1
            what = f"the answer could not be read ({type(exc).__name__}: {exc})"
            raise TeacherFatal(self._describe(what, "check the server at base_url")) from None
        if usage is not None:
            used = usage.input_tokens + usage.cache_write_tokens + usage.output_tokens
            self.limiter.used(used - estimate)
        return Completion(
            message=message,
            stop_reason=stop_reason,
            usage=usage or Usage(),
            cost_usd=None if usage is None else cost_usd(self.model, usage, self.config.price),
            retries=retries,
            seconds=time.monotonic() - started,
            sampled=sampled,
        )

    def _on_retry(self, event: RetryEvent) -> None:
        self.stats.retries += 1
        self.stats.retry_waits = [*self.stats.retry_waits[-999:], event.wait]
        log.warning(
            "%s; retry %d/%d in %.2fs",
            self._describe(event.error.what),
            event.number,
            self.retry.max_retries,
            event.wait,
        )

    # -- messages ----------------------------------------------------------------------

    def scrub(self, text: str) -> str:
        """`text` with this teacher's API key blanked out (servers echo keys in 401 bodies)."""
        return text.replace(self._secret, "[redacted]") if self._secret else text

    def _describe(self, what: str, todo: str = "") -> str:
        where = f" at {self.config.base_url}" if self.config.base_url else ""
        text = f"teacher {self.name!r} ({self.provider} model {self.model}{where}): {what}"
        return self.scrub(f"{text} — {todo}" if todo else text)

    def status_error(
        self, status: int, kind: str | None, detail: str | None, retry_after: float | None
    ) -> Transient | TeacherFatal:
        """The `Transient` or `TeacherFatal` for an HTTP error answer."""
        what = f"HTTP {status} {kind}" if kind else f"HTTP {status}"
        if detail:
            what += f": {detail if len(detail) < 500 else detail[:500] + '…'}"
        what = self.scrub(what)
        if any(hint in what.lower() for hint in CONTEXT_LENGTH_HINTS):
            # whatever the status (some servers answer 500): retrying cannot make it fit
            todo = "the conversation no longer fits the model's context window; lower max_turns or truncate tool output"
            return TeacherFatal(self._describe(what, todo))
        if status in (408, 409, 429) or status >= 500:
            return Transient(what, status=status, retry_after=retry_after)
        return TeacherFatal(self._describe(what, _what_to_do(status, self.config.api_key_env)))

    def connection_error(self, timed_out: bool) -> Transient:
        if timed_out:
            return Transient(f"no answer within {self.config.timeout:g}s (timeout)")
        return Transient("connection failed or dropped before an answer")


def _what_to_do(status: int | None, key_env: str = "") -> str:
    if status is None:
        return "check that the server at base_url is up and reachable, or raise `timeout`"
    if status == 401:
        return f"check the API key ({key_env or 'api_key'})"
    if status == 403:
        return "the key is not allowed to use this model or endpoint"
    if status == 404:
        return "check the model name and base_url"
    if status == 429:
        return "lower concurrency, rpm or tpm for this teacher, or raise max_retries"
    if status >= 500:
        return "the API is overloaded or failing; rerun later (runs resume) or raise max_retries"
    return "the request was refused as sent; fix the teacher config or the conversation"
