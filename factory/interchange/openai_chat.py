"""OpenAI chat fine-tuning JSONL: one `{"messages": [...], "tools": [...]}` object a line.

    system / user     {"role", "content"}
    assistant         {"role", "content" (null beside tool calls when empty), "tool_calls"?}
    tool              {"role": "tool", "tool_call_id", "content"}

Reasoning is left out: the format has no field for it. A row trained on one turn only (`--rows
step|last`) marks every other assistant message `"weight": 0`, as OpenAI's format does. `check_line` holds the format's rules;
the exporter checks every line it writes, so a line it writes is one the format accepts.
"""

from __future__ import annotations

import json
import re
from typing import Any

from factory.interchange.shape import ExportRow
from factory.records import Message

ROLES = ("system", "developer", "user", "assistant", "tool")
MESSAGE_KEYS = {"role", "content", "name", "tool_calls", "tool_call_id", "weight"}
LINE_KEYS = {"messages", "tools", "parallel_tool_calls"}
FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["content"] = m.content or None
        out["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                             for c in m.tool_calls]
    return out


def to_line(row: ExportRow) -> dict[str, Any]:
    messages = [_message(m) for m in row.messages]
    if not row.trains_every_turn:
        for i, m in enumerate(messages):
            if m["role"] == "assistant":
                m["weight"] = 1 if i in row.trained else 0
    return {"messages": messages, "tools": row.row.tools}


def _check_tools(tools: Any, problems: list[str]) -> set[str]:
    names: set[str] = set()
    if not isinstance(tools, list):
        problems.append("tools: must be a list")
        return names
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
            problems.append(f"tools[{i}]: must be {{type: function, function: {{name, parameters}}}}")
            continue
        name = function.get("name")
        if not isinstance(name, str) or not FUNCTION_NAME.match(name):
            problems.append(f"tools[{i}].function.name: {name!r} is not 1-64 letters, digits, _ or -")
            continue
        parameters = function.get("parameters", {"type": "object"})
        if not isinstance(parameters, dict) or parameters.get("type") != "object":
            problems.append(f"tools[{i}].function.parameters: must be a JSON schema of type object")
        names.add(name)
    return names


def _check_calls(where: str, calls: Any, tools: set[str], seen: set[str], open_calls: set[str],
                 problems: list[str]) -> None:
    if not isinstance(calls, list) or not calls:
        problems.append(f"{where}.tool_calls: must be a non-empty list")
        return
    for k, call in enumerate(calls):
        at = f"{where}.tool_calls[{k}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or call.get("type") != "function" or not isinstance(function, dict):
            problems.append(f"{at}: must be {{id, type: function, function: {{name, arguments}}}}")
            continue
        if not isinstance(call.get("id"), str) or not call["id"]:
            problems.append(f"{at}.id: must be a non-empty string")
        elif call["id"] in seen:
            problems.append(f"{at}.id: {call['id']!r} is used twice")
        else:
            seen.add(call["id"])
            open_calls.add(call["id"])
        if function.get("name") not in tools:
            problems.append(f"{at}.function.name: {function.get('name')!r} is not one of the line's tools")
        arguments = function.get("arguments")
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else None
        except json.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict):
            problems.append(f"{at}.function.arguments: must be a string holding a JSON object")


def check_line(line: Any) -> list[str]:
    """Every way `line` breaks OpenAI's chat fine-tuning format; empty when it is fit to upload."""
    if not isinstance(line, dict):
        return ["a line must be a JSON object"]
    problems = [f"{key}: not a key of the format" for key in sorted(set(line) - LINE_KEYS)]
    tools = _check_tools(line.get("tools", []), problems)
    messages = line.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "messages: must be a non-empty list"]
    seen: set[str] = set()
    open_calls: set[str] = set()
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(m, dict):
            problems.append(f"{where}: must be an object")
            continue
        problems += [f"{where}.{key}: not a key of a message" for key in sorted(set(m) - MESSAGE_KEYS)]
        role = m.get("role")
        if role not in ROLES:
            problems.append(f"{where}.role: {role!r} is not one of {', '.join(ROLES)}")
            continue
        if role != "tool" and open_calls:
            problems.append(f"{where}: comes before the tool results of {', '.join(sorted(open_calls))}")
            open_calls.clear()
        content = m.get("content")
        if role == "assistant" and "tool_calls" in m:
            _check_calls(where, m["tool_calls"], tools, seen, open_calls, problems)
            if content is not None and not isinstance(content, str):
                problems.append(f"{where}.content: must be a string or null")
        elif not isinstance(content, str) or (role == "assistant" and not content):
            problems.append(f"{where}.content: must be a {'non-empty ' if role == 'assistant' else ''}string")
        if role == "tool":
            if m.get("tool_call_id") not in open_calls:
                problems.append(f"{where}.tool_call_id: {m.get('tool_call_id')!r} answers no earlier tool call")
            else:
                open_calls.discard(m["tool_call_id"])
        elif "tool_call_id" in m:
            problems.append(f"{where}.tool_call_id: only tool messages have one")
        if "weight" in m and (role != "assistant" or m["weight"] not in (0, 1) or isinstance(m["weight"], bool)):
            problems.append(f"{where}.weight: only assistant messages have one, 0 or 1")
    if not any(isinstance(m, dict) and m.get("role") == "assistant" and m.get("weight", 1) for m in messages):
        problems.append("messages: no assistant message to train on")
    return problems
