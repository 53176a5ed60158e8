"""Renderers built from a `RenderConfig` by template name (the `Renderer` protocol's stage)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pydantic import ValidationError

from factory.errors import UsageError
from factory.records import Message
from factory.registry import Registry
from factory.render import chatml, qwen3
from factory.render.config import RenderConfig, Thinking
from factory.render.encode import Encoder, encode_batch
from factory.render.pieces import Piece, Rendered, RenderError
from factory.render.vocab import qwen3_encoder

Conversation = tuple[list[Message], list[dict[str, Any]]]
LayoutFn = Callable[[list[Message], list[dict[str, Any]], Thinking], list[Piece]]


class BatchRenderer(Protocol):
    """What the dataset writer and the CLI need beyond `protocols.Renderer`."""

    def render(self, messages: list[Message], tools: list[dict[str, Any]]) -> Rendered: ...
    def render_batch(self, conversations: Sequence[Conversation]) -> list[Rendered | RenderError]: ...
    def decode(self, ids: Sequence[int]) -> str: ...
    def card(self) -> dict[str, str]: ...


class TemplateRenderer:
    """A built-in template laid out in Python and encoded with an `Encoder`, offline."""

    def __init__(self, name: str, layout: LayoutFn, encoder: Encoder, thinking: Thinking):
        self.name, self._layout, self.encoder, self.thinking = name, layout, encoder, thinking

    def render(self, messages: list[Message], tools: list[dict[str, Any]]) -> Rendered:
        """One conversation; raises `RenderError` when no exact render exists."""
        (row,) = self.render_batch([(messages, tools)])
        if isinstance(row, RenderError):
            raise row
        return row

    def render_batch(self, conversations: Sequence[Conversation]) -> list[Rendered | RenderError]:
        """Many conversations at once; a row that cannot render is returned as its error."""
        laid: list[list[Piece] | RenderError] = []
        for messages, tools in conversations:
            try:
                laid.append(self._layout(messages, tools, self.thinking))
            except RenderError as exc:
                laid.append(exc)
        ok = [p for p in laid if not isinstance(p, RenderError)]
        encoded = iter(encode_batch(ok, self.encoder))
        return [p if isinstance(p, RenderError) else next(encoded) for p in laid]

    def decode(self, ids: Sequence[int]) -> str:
        return self.encoder.decode(ids)

    def card(self) -> dict[str, str]:
        info = {"template": self.name, "thinking": str(self.thinking), "tokenizer": self.encoder.name}
        sha = getattr(self.encoder, "sha256", None)
        if sha:
            info["tokenizer_sha256"] = sha
        return info


def _qwen3(config: RenderConfig) -> BatchRenderer:
    return TemplateRenderer("qwen3", qwen3.layout, qwen3_encoder(), config.thinking)


def _chatml(config: RenderConfig) -> BatchRenderer:
    return TemplateRenderer("chatml", chatml.layout, qwen3_encoder(), config.thinking)


def _hf(config: RenderConfig) -> BatchRenderer:
    from factory.render.hf import HFTemplateRenderer

    if not config.tokenizer:
        raise UsageError("render template 'hf' needs a tokenizer name or path (tokenizer: ...)")
    return HFTemplateRenderer(config.tokenizer, config.thinking, config.chat_template)


TEMPLATES: Registry[Callable[[RenderConfig], BatchRenderer]] = Registry("render template")
"""A template's renderer from the rendering settings; a new template is its layout module and
one `add` (and its name in `TEMPLATE_NAMES`, which the command line's help reads without
loading any template)."""
TEMPLATES.add("qwen3", _qwen3)
TEMPLATES.add("chatml", _chatml)
TEMPLATES.add("hf", _hf)


def build_renderer(config: RenderConfig | None = None, **overrides: Any) -> BatchRenderer:
    """`build_renderer(template="qwen3", thinking="all")`; an unknown template lists the valid ones."""
    base = config.model_dump() if config is not None else {}
    try:
        config = RenderConfig.model_validate({**base, **overrides})
    except ValidationError as exc:
        why = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"render config: {why}") from exc
    return TEMPLATES.get(config.template)(config)
