"""Generic ChatML: `<|im_start|>ROLE\\nCONTENT<|im_end|>\\n` per message, nothing else special.

For students whose tokenizer knows ChatML's two control tokens and no tool tokens. Everything
besides `<|im_start|>` and `<|im_end|>` is plain text: the tool list in the system turn, reasoning
as a `<think>` block, tool calls as `<tool_call>` blocks, and one `tool` turn per tool result.
"""

from __future__ import annotations

from typing import Any

from factory.records import Message
from factory.render.config import Thinking, keeps_reasoning
from factory.render.pieces import Layout, Piece
from factory.render.qwen3 import (
    TOOLS_INTRO,
    TOOLS_OUTRO,
    arguments_json,
    last_query_index,
    split_reasoning,
    tools_block,
    turn,
)

CHATML_CONTROLS = ("<|im_start|>", "<|im_end|>")


def layout(messages: list[Message], tools: list[dict[str, Any]], thinking: Thinking) -> list[Piece]:
    out = Layout(CHATML_CONTROLS)
    first_is_system = bool(messages) and messages[0].role == "system"
    if tools:
        head = messages[0].content + "\n\n" if first_is_system else ""
        turn(out, "system", head + TOOLS_INTRO + tools_block(tools) + TOOLS_OUTRO, 0 if first_is_system else -1)
    elif first_is_system:
        turn(out, "system", messages[0].content, 0)
    last_query = last_query_index(messages)
    for i, m in enumerate(messages):
        if m.role in ("user", "tool") or (m.role == "system" and i > 0):
            turn(out, m.role, m.content, i)
        elif m.role == "assistant":
            _assistant(out, m, i, keeps_reasoning(thinking, i, last_query))
    return out.pieces


def _assistant(out: Layout, m: Message, i: int, think: bool) -> None:
    reasoning, content = split_reasoning(m)
    out.control("<|im_start|>", role="assistant", index=i)
    out.text("assistant\n", role="assistant", index=i)
    parts: list[str] = []
    if think and reasoning:
        parts.append("<think>\n" + reasoning.strip("\n") + "\n</think>\n\n" + content.lstrip("\n"))
    else:
        parts.append(content)
    for k, call in enumerate(m.tool_calls):
        sep = "\n" if k > 0 or content else ""
        args = arguments_json(call, i)
        parts.append(f'{sep}<tool_call>\n{{"name": "{call.name}", "arguments": {args}}}\n</tool_call>')
    out.text("".join(parts), train=True, role="assistant", index=i)
    out.control("<|im_end|>", train=True, role="assistant", index=i)
    out.text("\n", role="assistant", index=i)
