"""Qwen3's chat template, piece for piece (the layout of Qwen3's own Jinja template).

The text is what `apply_chat_template` prints; the pieces add what the string alone cannot say:
which parts the assistant wrote, and which `<tool_call>`-like strings are template structure
(control tokens) rather than text that a message happened to contain.
"""

from __future__ import annotations

import json
from typing import Any

from factory.records import Message, ToolCall
from factory.render.config import Thinking, keeps_reasoning
from factory.render.pieces import Layout, Piece, RenderError
from factory.render.vocab import QWEN3_CONTROL_IDS

TOOLS_INTRO = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_OUTRO = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


def tools_block(tools: list[dict[str, Any]]) -> str:
    return "".join("\n" + json.dumps(tool, ensure_ascii=False) for tool in tools)


def arguments_json(call: ToolCall, index: int) -> str:
    """The arguments as Qwen3's template prints a dict: `json.dumps(..., ensure_ascii=False)`."""
    try:
        return json.dumps(json.loads(call.arguments), ensure_ascii=False)
    except json.JSONDecodeError as exc:
        raise RenderError(
            f"tool call {call.name!r} ({call.id}) has arguments that are not JSON: {exc}",
            index=index,
            reason="bad_arguments",
        ) from exc


def last_query_index(messages: list[Message]) -> int:
    """The last user message that is not a wrapped tool response (Qwen3's `ns.last_query_index`)."""
    for index in range(len(messages) - 1, -1, -1):
        m = messages[index]
        wrapped = m.content.startswith("<tool_response>") and m.content.endswith("</tool_response>")
        if m.role == "user" and not wrapped:
            return index
    return len(messages) - 1


def split_reasoning(message: Message) -> tuple[str, str]:
    """(reasoning, content): `reasoning` when given, else a `<think>` block parsed out of the content."""
    content = message.content
    if message.reasoning is not None:
        return message.reasoning, content
    if "</think>" in content:
        head, _, _ = content.partition("</think>")
        tail = content.split("</think>")[-1]
        return head.rstrip("\n").split("<think>")[-1].lstrip("\n"), tail.lstrip("\n")
    return "", content


def layout(messages: list[Message], tools: list[dict[str, Any]], thinking: Thinking) -> list[Piece]:
    out = Layout(QWEN3_CONTROL_IDS)
    first_is_system = bool(messages) and messages[0].role == "system"
    if tools:
        where: dict[str, Any] = {"role": "system", "index": 0 if first_is_system else -1}
        head = messages[0].content + "\n\n" if first_is_system else ""
        out.control("<|im_start|>", **where)
        out.text("system\n" + head + TOOLS_INTRO + tools_block(tools), **where)
        out.lit(TOOLS_OUTRO + "<|im_end|>\n", **where)
    elif first_is_system:
        turn(out, "system", messages[0].content, 0)
    last_query = last_query_index(messages)
    for i, m in enumerate(messages):
        if m.role == "user" or (m.role == "system" and i > 0):
            turn(out, m.role, m.content, i)
        elif m.role == "assistant":
            think = keeps_reasoning(thinking, i, last_query)
            _assistant(out, m, i, think, is_last=i == len(messages) - 1)
        elif m.role == "tool":
            if i == 0 or messages[i - 1].role != "tool":
                out.control("<|im_start|>", role="tool", index=i)
                out.text("user", role="tool", index=i)
            out.text("\n", role="tool", index=i)
            out.control("<tool_response>", role="tool", index=i)
            out.text("\n" + m.content + "\n", role="tool", index=i)
            out.control("</tool_response>", role="tool", index=i)
            if i == len(messages) - 1 or messages[i + 1].role != "tool":
                out.control("<|im_end|>", role="tool", index=i)
                out.text("\n", role="tool", index=i)
    return out.pieces


def turn(out: Layout, role: str, content: str, index: int) -> None:
    """One plain ChatML turn, `<|im_start|>role\ncontent<|im_end|>\n` (also chatml.py's)."""
    out.control("<|im_start|>", role=role, index=index)
    out.text(role + "\n" + content, role=role, index=index)
    out.control("<|im_end|>", role=role, index=index)
    out.text("\n", role=role, index=index)


def _assistant(out: Layout, m: Message, i: int, think: bool, is_last: bool) -> None:
    reasoning, content = split_reasoning(m)
    a: dict[str, Any] = {"role": "assistant", "index": i}
    out.control("<|im_start|>", **a)
    out.text("assistant\n", **a)
    if think and (is_last or reasoning):
        out.control("<think>", train=True, **a)
        out.text("\n" + reasoning.strip("\n") + "\n", train=True, **a)
        out.control("</think>", train=True, **a)
        out.text("\n\n" + content.lstrip("\n"), train=True, **a)
    else:
        out.text(content, train=True, **a)
    for k, call in enumerate(m.tool_calls):
        if k > 0 or content:
            out.text("\n", train=True, **a)
        out.control("<tool_call>", train=True, **a)
        args = arguments_json(call, i)
        out.text(f'\n{{"name": "{call.name}", "arguments": {args}}}\n', train=True, **a)
        out.control("</tool_call>", train=True, **a)
    out.control("<|im_end|>", train=True, **a)
    out.text("\n", **a)
