"""The tool schemas an imported trajectory's model was shown, which the files of most harnesses
do not hold: without them an exported row's tool calls name tools the row does not list, and
OpenAI's format (and any trainer that renders tools into the prompt) refuses it.

    mini-swe-agent 2.x   its one `bash` tool, when the model called tools (text-format runs had none)
    SWE-agent 1.x        `bash` and the tools of each bundle in the run's replay config
                         (sweagent-1.json, made from SWE-agent's releases by scripts/make_sweagent_tools.py)
    OpenHands            the `tools` of its system event, as the file holds them
    any harness          a tool that was called but whose schema none of the above gives gets one
                         inferred from the arguments of its calls, so every call names a listed tool
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from factory.records import Message

MINI_SWE_AGENT_BASH: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Execute a bash command",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The bash command to execute"}},
            "required": ["command"],
        },
    },
}
"""minisweagent/models/utils/actions_toolcall.py `BASH_TOOL` (2.x), the only tool its models are given."""

INFERRED = "Schema inferred from this trajectory's calls: the harness that wrote it did not record it."
_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"),
               (dict, "object"))


def name_of(tool: Any) -> str | None:
    """A schema's tool name, in the chat layout (`function.name`) or the flat one (`name`)."""
    if not isinstance(tool, dict):
        return None
    function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
    name = function.get("name")
    return name if isinstance(name, str) else None


@cache
def _sweagent() -> dict[str, Any]:
    return json.loads((Path(__file__).parent / "sweagent-1.json").read_text(encoding="utf-8"))


def swe_agent_tools(version: str | None, replay: dict[str, Any]) -> list[dict[str, Any]]:
    """SWE-agent 1.x's schemas for the run its replay config describes; none for other versions,
    whose tools this table does not know (0.x had no function calls)."""
    if not (version or "").startswith("1."):
        return []
    config = (replay.get("agent") or {}).get("tools") or {}
    table = _sweagent()
    tools = [table["bash"]] if config.get("enable_bash_tool", True) else []
    for bundle in config.get("bundles") or []:
        if not isinstance(bundle, dict):
            continue
        hidden = set(bundle.get("hidden_tools") or [])
        name = Path(str(bundle.get("path", ""))).name
        tools += [t for t in table["bundles"].get(name, []) if name_of(t) not in hidden]
    return tools


def _chat_layout(tool: dict[str, Any]) -> dict[str, Any]:
    """A Responses-API schema (`{type, name, description, parameters}`) in the chat layout."""
    return {"type": "function", "function": {k: v for k, v in tool.items() if k != "type"}}


def _argument_schema(values: list[Any]) -> dict[str, Any]:
    types = sorted({next((n for t, n in _JSON_TYPES if isinstance(v, t)), "string") for v in values if v is not None})
    return {"type": types[0]} if len(types) == 1 else {}


def _inferred(name: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    keys = sorted({key for args in calls for key in args})
    properties = {key: _argument_schema([args[key] for args in calls if key in args]) for key in keys}
    required = [key for key in keys if all(key in args for args in calls)]
    return {"type": "function", "function": {"name": name, "description": INFERRED, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


def complete(messages: list[Message], known: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`known` (one schema a name, first wins) and an inferred schema for each tool that the
    messages call but `known` does not list."""
    tools, names = [], set()
    for tool in known:
        name = name_of(tool)
        if name and name not in names:
            tools.append(tool if "function" in tool else _chat_layout(tool))
            names.add(name)
    called: dict[str, list[dict[str, Any]]] = {}
    for call in (c for m in messages for c in m.tool_calls if c.name not in names):
        try:
            arguments = json.loads(call.arguments)
        except json.JSONDecodeError:
            arguments = None
        called.setdefault(call.name, []).append(arguments if isinstance(arguments, dict) else {})
    return tools + [_inferred(name, calls) for name, calls in called.items()]
