"""ShareGPT JSON lines with tool calls, as LLaMA-Factory reads them:

    {"conversations": [{"from": "human" | "gpt" | "function_call" | "observation", "value": str}, ...],
     "system": str, "tools": str (the tools' JSON schemas as JSON text), "id": INSTANCE/TEACHER/ATTEMPT}

Turns alternate: `human` or `observation` at even positions, `gpt` or `function_call` at odd
ones, and a conversation ends with the model's turn (trailing tool results, such as the one
that answers `submit`, teach nothing and are left out). An assistant turn with tool calls is a
`function_call` whose value is the calls as JSON (`{"name", "arguments": {...}}`, a list when
there are several). Text the turn wrote beside its calls goes before them, the JSON then wrapped
in `<tool_call>...</tool_call>`: LLaMA-Factory keeps what surrounds those words as text and renders
the calls after it (they are its `tool_call_words` in every template but LFM2's). Reasoning, on a
`gpt` turn as on a `function_call`, comes first in a `<think>` block, LLaMA-Factory's thought.
Consecutive tool results become one `observation`, and an assistant message that only spoke
joins the assistant message right after it (an agent that said something, then acted) as one turn. A step or last row (`--rows step|last`) ends
with the turn it trains; LLaMA-Factory trains that turn alone with `mask_history: true`. A row whose turns cannot alternate (a user
message right after a tool result) is refused with `ShareGPTLayoutError`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from factory.interchange.shape import ExportRow
from factory.records import Message

HUMAN, GPT, CALL, OBSERVATION = "human", "gpt", "function_call", "observation"
LINE_KEYS = {"conversations", "system", "tools", "id"}
_PARITY = {HUMAN: 0, OBSERVATION: 0, GPT: 1, CALL: 1}
TOOL_CALL = ("<tool_call>", "</tool_call>")
_WRAPPED = re.compile(rf"{re.escape(TOOL_CALL[0])}(.*?){re.escape(TOOL_CALL[1])}", re.DOTALL)  # as LLaMA-Factory finds them


class ShareGPTLayoutError(ValueError):
    """The row does not fit the layout: turns that cannot alternate, arguments that are not JSON."""


def _thought(m: Message) -> str:
    return f"<think>\n{m.reasoning.strip()}\n</think>\n\n" if m.reasoning and m.reasoning.strip() else ""


def _call_value(m: Message) -> str:
    try:
        calls = [{"name": c.name, "arguments": json.loads(c.arguments)} for c in m.tool_calls]
    except json.JSONDecodeError as exc:
        raise ShareGPTLayoutError(f"a tool call's arguments are not JSON ({exc})") from None
    body = json.dumps(calls[0] if len(calls) == 1 else calls, ensure_ascii=False)
    # Qwen3's own template writes the text, a newline, then the calls: so does LLaMA-Factory from this
    return _thought(m) + (f"{m.content}\n{TOOL_CALL[0]}{body}{TOOL_CALL[1]}" if m.content.strip() else body)


def _gpt_value(m: Message) -> str:
    return _thought(m) + m.content


def _joined(said: Message, then: Message) -> Message:
    """An assistant message that only spoke, and the assistant message right after it, as one turn."""
    def join(*parts: str | None) -> str:
        return "\n\n".join(p for p in parts if p and p.strip())
    return then.model_copy(update={"content": join(said.content, then.content),
                                   "reasoning": join(said.reasoning, then.reasoning) or None})


def to_line(row: ExportRow) -> dict[str, Any]:
    system = "\n\n".join(m.content for m in row.messages if m.role == "system")
    turns: list[dict[str, str]] = []
    spoke: Message | None = None  # the assistant message that made the last turn, if it only spoke
    for m in row.messages:
        if m.role == "system":
            continue
        if m.role == "tool" and turns and turns[-1]["from"] == OBSERVATION:
            turns[-1]["value"] += "\n\n" + m.content
            continue
        if m.role == "assistant" and spoke is not None and turns and turns[-1]["from"] == GPT:
            m = _joined(spoke, m)
            turns.pop()
        spoke = m if m.role == "assistant" and not m.tool_calls else None
        tag = {"user": HUMAN, "tool": OBSERVATION}.get(m.role) or (CALL if m.tool_calls else GPT)
        value = _call_value(m) if tag == CALL else _gpt_value(m) if tag == GPT else m.content
        if len(turns) % 2 != _PARITY[tag]:
            raise ShareGPTLayoutError(f"message {len(turns)} ({m.role}) would break the turns' alternation")
        turns.append({"from": tag, "value": value})
    while turns and turns[-1]["from"] == OBSERVATION:
        turns.pop()
    return {"conversations": turns, "system": system, "tools": json.dumps(row.row.tools, ensure_ascii=False),
            "id": row.label}


def check_line(line: Any) -> list[str]:
    """Every way `line` breaks the ShareGPT layout above; empty when LLaMA-Factory can read it."""
    if not isinstance(line, dict):
        return ["a line must be a JSON object"]
    problems = [f"{key}: not a key of the format" for key in sorted(set(line) - LINE_KEYS)]
    for key in ("system", "tools", "id"):
        if key in line and not isinstance(line[key], str):
            problems.append(f"{key}: must be a string")
    names: set[str] = set()
    try:
        tools = json.loads(line.get("tools") or "[]")
        names = {t["function"]["name"] if "function" in t else t["name"] for t in tools}
    except (TypeError, KeyError, json.JSONDecodeError):
        problems.append("tools: must be JSON text of a list of tool schemas")
    turns = line.get("conversations")
    if not isinstance(turns, list) or not turns:
        return [*problems, "conversations: must be a non-empty list"]
    for i, turn in enumerate(turns):
        where = f"conversations[{i}]"
        if not isinstance(turn, dict) or set(turn) != {"from", "value"} or not isinstance(turn.get("value"), str):
            problems.append(f"{where}: must be {{from, value}} with a string value")
            continue
        tag = turn["from"]
        if tag not in _PARITY:
            problems.append(f"{where}.from: {tag!r} is not one of {', '.join(_PARITY)}")
        elif _PARITY[tag] != i % 2:
            expected = " or ".join(t for t, p in _PARITY.items() if p == i % 2)
            problems.append(f"{where}.from: {tag!r} where the turns' alternation wants {expected}")
        elif tag == CALL:
            problems += _check_call(where, turn["value"], names)
    if len(turns) % 2:
        problems.append("conversations: must end with the model's turn (gpt or function_call)")
    return problems


def calls_in(value: str) -> list[Any]:
    """The calls of a `function_call` turn's value, as LLaMA-Factory reads them; ValueError (with
    why) when it holds none."""
    body = value.split("</think>", 1)[1] if value.startswith("<think>") and "</think>" in value else value
    wrapped = _WRAPPED.search(body)
    if wrapped and wrapped.end() != len(body.rstrip()):
        raise ValueError(f"{TOOL_CALL[0]}...{TOOL_CALL[1]} must wrap the calls, once and last "
                         "(LLaMA-Factory reads the first pair as the calls, the rest as text)")
    try:
        calls = json.loads(wrapped.group(1) if wrapped else body)
    except json.JSONDecodeError:
        raise ValueError("a function_call must be JSON after its optional <think> block and text, "
                         f"the JSON in {TOOL_CALL[0]}...{TOOL_CALL[1]} when there is text") from None
    return calls if isinstance(calls, list) else [calls]


def _check_call(where: str, value: str, names: set[str]) -> list[str]:
    try:
        calls = calls_in(value)
    except ValueError as exc:
        return [f"{where}.value: {exc}"]
    problems = []
    for call in calls:
        if not (isinstance(call, dict) and isinstance(call.get("arguments"), dict) and call.get("name") in names):
            problems.append(f"{where}.value: each call needs a name among the tools and arguments as an object")
    return problems
