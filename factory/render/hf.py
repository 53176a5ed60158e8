"""Any Hugging Face tokenizer's own chat template, through `transformers` (an optional extra).

The template renders the text. What is trained comes from its `{% generation %}` markers when it
has them, else from rendering growing prefixes of the conversation: the header that
`add_generation_prompt` prints is not trained, nor is whitespace after the turn's closing control
token. A template that rewrites earlier turns as the conversation grows (Qwen3's stock template
gives only the final turn an empty `<think>` block) has no such prefixes: use a training template
with markers, or the built-in `qwen3` renderer. Text is tokenized the way a trainer does, so a
message containing a control token's text is refused here (the built-in renderers keep it text).
Tool tokens count the tool messages' content only (their wrappers are the template's business).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from factory.errors import UsageError
from factory.records import Message
from factory.render.config import Thinking
from factory.render.encode import encode_batch
from factory.render.pieces import Piece, Rendered, RenderError
from factory.render.qwen3 import arguments_json, split_reasoning


class HFEncoder:
    def __init__(self, tokenizer: Any, name: str):
        self.tok, self.name = tokenizer, name

    def encode_texts(self, texts: list[str]) -> list[list[int]]:
        return list(self.tok(texts, add_special_tokens=False)["input_ids"]) if texts else []

    def control_id(self, token: str) -> int:
        return int(self.tok.convert_tokens_to_ids(token))

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tok.decode(list(ids), skip_special_tokens=False))


class HFTemplateRenderer:
    def __init__(self, tokenizer: str, thinking: Thinking, chat_template: str | None = None):
        try:
            from transformers import AutoTokenizer
        except ImportError as exc:
            raise UsageError("render template 'hf' needs `transformers`: pip install transformers") from exc
        try:
            self.tok = AutoTokenizer.from_pretrained(tokenizer)
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot load tokenizer {tokenizer!r}: {exc}") from exc
        self.template = chat_template or self.tok.chat_template
        if not isinstance(self.template, str):
            raise UsageError(f"tokenizer {tokenizer!r} has no chat template; pass chat_template")
        self.thinking = thinking
        self.encoder = HFEncoder(self.tok, tokenizer)
        self.markers = "{%- generation" in self.template or "{% generation" in self.template
        self.controls = [t.content for t in self.tok.added_tokens_decoder.values() if t.content.strip()]

    def render(self, messages: list[Message], tools: list[dict[str, Any]]) -> Rendered:
        (row,) = self.render_batch([(messages, tools)])
        if isinstance(row, RenderError):
            raise row
        return row

    def render_batch(
        self, conversations: Sequence[tuple[list[Message], list[dict[str, Any]]]]
    ) -> list[Rendered | RenderError]:
        out: list[Rendered | RenderError] = []
        for messages, tools in conversations:
            try:
                pieces = self._layout(messages, tools)
            except RenderError as exc:
                out.append(exc)
                continue
            (row,) = encode_batch([pieces], self.encoder)
            if isinstance(row, Rendered):
                tool_texts = [m.content for m in messages if m.role == "tool"]
                row.tool_tokens = sum(map(len, self.encoder.encode_texts(tool_texts)))
            out.append(row)
        return out

    def decode(self, ids: Sequence[int]) -> str:
        return self.encoder.decode(ids)

    def card(self) -> dict[str, str]:
        sha = hashlib.sha256(self.template.encode("utf-8")).hexdigest()
        thinking = "none" if self.thinking is Thinking.none else "template's own"
        return {"template": "hf", "thinking": thinking, "tokenizer": self.encoder.name, "chat_template_sha256": sha}

    def _apply(self, msgs: list[dict[str, Any]], tools: list[dict[str, Any]], prompt: bool = False) -> str:
        try:
            text = self.tok.apply_chat_template(
                msgs,
                tools=tools or None,
                chat_template=self.template,
                tokenize=False,
                add_generation_prompt=prompt,
            )
            return str(text)
        except Exception as exc:  # a template raises whatever its author chose (raise_exception, ...)
            raise RenderError(f"chat template failed: {exc}", reason="template_error") from exc

    def _messages(self, messages: list[Message], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for i, m in enumerate(messages):
            if m.role == "assistant" and m.reasoning is None and "</think>" in m.content:
                reasoning, content = split_reasoning(m)  # as Qwen3 does; other templates get it too
                m = m.model_copy(update={"reasoning": reasoning, "content": content})
            strings = [m.content, m.reasoning or ""] + [c.arguments for c in m.tool_calls]
            for token in self.controls:
                if any(token in s for s in strings):
                    raise RenderError(
                        f"contains the control token text {token!r}, which the 'hf' template would "
                        "tokenize as a control token (the qwen3 and chatml templates keep it text)",
                        index=i,
                        reason="control_text",
                    )
            d = m.to_openai()
            if self.thinking is Thinking.none:
                d.pop("reasoning_content", None)
            for call, c in zip(m.tool_calls, d.get("tool_calls", []), strict=True):
                c["function"]["arguments"] = json.loads(arguments_json(call, i))
            out.append(d)
        schema = json.dumps(tools, ensure_ascii=False)
        if any(token in schema for token in self.controls):
            raise RenderError("a tool schema contains control token text", reason="control_text")
        return out

    def _layout(self, messages: list[Message], tools: list[dict[str, Any]]) -> list[Piece]:
        msgs = self._messages(messages, tools)
        full = self._apply(msgs, tools)
        if self.markers:
            spans = self._marked_spans(msgs, tools, full)
        else:
            spans = self._prefix_spans(msgs, tools, full)
        cuts = sorted({0, len(full), *(x for span in spans for x in span)})
        pieces: list[Piece] = []
        for a, b in zip(cuts, cuts[1:], strict=False):
            train = any(s <= a < e for s, e in spans)
            pieces.append(Piece(full[a:b], train, False, "assistant" if train else ""))
        return pieces

    def _marked_spans(
        self, msgs: list[dict[str, Any]], tools: list[dict[str, Any]], full: str
    ) -> list[tuple[int, int]]:
        from transformers.utils.chat_template_utils import render_jinja_template

        rendered, indices = render_jinja_template(
            conversations=[msgs],
            tools=tools or None,
            chat_template=self.template,
            return_assistant_tokens_mask=True,
            **self.tok.special_tokens_map,
        )
        if rendered[0] != full:
            raise RenderError("the render with {% generation %} differs from the plain one", reason="template_error")
        return [(int(s), int(e)) for s, e in indices[0]]

    def _prefix_spans(
        self, msgs: list[dict[str, Any]], tools: list[dict[str, Any]], full: str
    ) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        for k, m in enumerate(msgs):
            if m["role"] != "assistant":
                continue
            header = self._apply(msgs[:k], tools, prompt=True) if k else ""
            turn = self._apply(msgs[: k + 1], tools)
            if not (full.startswith(header) and full.startswith(turn) and len(header) <= len(turn)):
                raise RenderError(
                    "the chat template rewrites earlier turns as the conversation grows, so its "
                    "assistant turns cannot be located; use a template with {% generation %} markers",
                    index=k,
                    reason="template_not_prefix_stable",
                )
            start, end = len(header), len(turn)
            body = full[start:end].rstrip()
            if any(body.endswith(c) for c in self.controls):
                end = start + len(body)
            spans.append((start, end))
        return spans

