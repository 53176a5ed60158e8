"""Our OpenAI-layout messages ⇄ Anthropic Messages API content blocks, both ways.

To Anthropic (`to_anthropic`):
- `system` messages → the `system` parameter, one text block each;
- `user` text → a text block; consecutive `tool` messages → one `user` message of
  `tool_result` blocks (a `user` message right after them joins it, after the results);
- `assistant` → text, then one `tool_use` block per tool call. A turn that came back with
  thinking keeps Anthropic's own blocks in `provider_blocks`, in their order, signatures
  intact; they are sent back verbatim (thinking must return unmodified for tool use to
  continue) as long as the message's text and tool calls still match them. Otherwise its
  thinking blocks go first, then the message's text and tool calls. `reasoning` without
  provider blocks (e.g. another provider's) is dropped: Anthropic only takes signed thinking.
- Tool-call `arguments` that are not a JSON object (invalid JSON, or a list, a string…)
  cannot be an Anthropic `input`, so they travel as `{"__raw_arguments__": "<the text>"}`,
  and that exact shape turns back into the original text on the way in.
- Prompt caching: `cache_control` on the last tool, the last system block and the last
  cacheable block of the conversation (three of Anthropic's four breakpoints), so the
  tools + system prefix and the conversation so far are read from cache on the next turn.

From Anthropic (`from_anthropic_content`, `from_anthropic`): the inverse. Text blocks join
with newlines into `content`; `tool_use` → `ToolCall(arguments=json.dumps(input,
ensure_ascii=False))`; thinking → `reasoning`. A tool message's `name` is not carried
(a `tool_result` block has no name).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from factory.records import Message, ToolCall

RAW_ARGUMENTS = "__raw_arguments__"
CACHE = {"type": "ephemeral"}
THINKING_TYPES = ("thinking", "redacted_thinking")
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
"""Anthropic stop reasons in OpenAI's words (the layout of our records); others pass as is."""


def tool_input(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError:
        value = None
    if isinstance(value, dict) and set(value) != {RAW_ARGUMENTS}:
        return value
    return {RAW_ARGUMENTS: arguments}


def tool_arguments(input: dict[str, Any]) -> str:
    if set(input) == {RAW_ARGUMENTS} and isinstance(input[RAW_ARGUMENTS], str):
        return input[RAW_ARGUMENTS]
    return json.dumps(input, ensure_ascii=False)


def anthropic_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI function schemas → Anthropic tool schemas."""
    out = []
    for i, tool in enumerate(tools):
        function = tool.get("function") if tool.get("type") == "function" else None
        if not isinstance(function, dict) or "name" not in function:
            raise ValueError(f"tool #{i} is not an OpenAI function schema: {str(tool)[:200]}")
        schema = {
            "name": function["name"],
            "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
        }
        if function.get("description"):
            schema["description"] = function["description"]
        out.append(schema)
    return out


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    kept = message.provider_blocks or []
    if kept and _same_turn(message, from_anthropic_content(kept)):
        return copy.deepcopy(kept)
    blocks = [copy.deepcopy(b) for b in kept if b.get("type") in THINKING_TYPES]
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        block = {"type": "tool_use", "id": call.id, "name": call.name}
        blocks.append({**block, "input": tool_input(call.arguments)})
    return blocks


def _same_turn(a: Message, b: Message) -> bool:
    return a.content == b.content and a.tool_calls == b.tool_calls


def _user_blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        result = {"type": "tool_result", "tool_use_id": message.tool_call_id or ""}
        return [{**result, "content": message.content}]
    return [{"type": "text", "text": message.content}]


def to_anthropic(
    messages: list[Message], tools: list[dict[str, Any]] | None = None, *, cache: bool = True
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(system blocks, messages, tools) for `messages.create`, cache breakpoints included."""
    system = [
        {"type": "text", "text": m.content} for m in messages if m.role == "system" and m.content
    ]
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _assistant_blocks(message) if role == "assistant" else _user_blocks(message)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    schemas = anthropic_tools(tools or [])
    if cache:
        for blocks in (schemas, system):
            if blocks:
                blocks[-1]["cache_control"] = dict(CACHE)
        _mark_last_cacheable(turns)
    return system, turns, schemas


def _mark_last_cacheable(turns: list[dict[str, Any]]) -> None:
    for turn in reversed(turns):
        for block in reversed(turn["content"]):
            if block.get("type") not in THINKING_TYPES:
                block["cache_control"] = dict(CACHE)
                return


def from_anthropic_content(blocks: list[dict[str, Any]]) -> Message:
    """An assistant message from Anthropic content blocks (a response's, or a request's)."""
    texts, thinking, calls = [], [], []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(block["text"])
        elif kind == "tool_use":
            arguments = tool_arguments(block["input"])
            calls.append(ToolCall(id=block["id"], name=block["name"], arguments=arguments))
        elif kind == "thinking":
            thinking.append(block["thinking"])
    has_thinking = any(b.get("type") in THINKING_TYPES for b in blocks)
    return Message(
        role="assistant",
        content="\n".join(texts),
        reasoning="\n".join(thinking) if thinking else None,
        provider_blocks=[_without_cache(b) for b in blocks] if has_thinking else None,
        tool_calls=calls,
    )


def _without_cache(block: dict[str, Any]) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in block.items() if k != "cache_control"}


def from_anthropic(
    system: list[dict[str, Any]] | str | None, turns: list[dict[str, Any]]
) -> list[Message]:
    """Our messages from a `messages.create` request's `system` and `messages` (the inverse)."""
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    out = [Message(role="system", content=b["text"]) for b in system or []]
    for turn in turns:
        content = turn["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if turn["role"] == "assistant":
            out.append(from_anthropic_content(blocks))
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                result = _text(block.get("content"))
                out.append(Message(role="tool", tool_call_id=block["tool_use_id"], content=result))
            elif block.get("type") == "text":
                out.append(Message(role="user", content=block["text"]))
    return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if b.get("type") == "text")
