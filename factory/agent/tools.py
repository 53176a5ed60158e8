"""The agent's tools: their JSON schemas (OpenAI function format), call checking, bash, output cuts.

    TOOLS = [bash(command, timeout?), str_replace_editor(command, path, ...), submit()]

`parse_call` turns a `ToolCall` into an `Action` or raises `MalformedCall` (invalid JSON,
unknown tool, missing or mistyped argument): what the loop counts as a format error. Tool
errors a model can recover from (a file that does not exist, an `old_str` that is not
unique) are not format errors; they go back to the model as the tool's output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from factory.protocols import ExecResult, Sandbox
from factory.records import ToolCall

BASH, EDITOR, SUBMIT = "bash", "str_replace_editor", "submit"
EDITOR_COMMANDS = ("view", "create", "str_replace", "insert", "undo_edit")


def function_schema(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


TOOLS: list[dict[str, Any]] = [
    function_schema(
        BASH,
        "Run a bash command in the repository and return its output (stdout and stderr). "
        "Each call starts a fresh shell in the repository root: `cd` and variables do not "
        "carry over. The command is killed at its timeout. There is no network.",
        {
            "command": {"type": "string", "description": "The bash command to run."},
            "timeout": {
                "type": "integer",
                "description": "Seconds before the command is killed (capped by the agent's limit).",
            },
        },
        ["command"],
    ),
    function_schema(
        EDITOR,
        "View, create and edit files. `view` shows a file with line numbers (optionally only "
        "`view_range` [start, end], end -1 for the end of the file) or lists a directory two "
        "levels deep. `create` writes a new file. `str_replace` replaces `old_str`, which must "
        "occur exactly once in the file, with `new_str`. `insert` puts `new_str` after line "
        "`insert_line` (0 for the top). `undo_edit` reverts the last edit of `path`.",
        {
            "command": {
                "type": "string",
                "enum": list(EDITOR_COMMANDS),
                "description": "The operation.",
            },
            "path": {
                "type": "string",
                "description": "Absolute path, or relative to the repository root.",
            },
            "file_text": {"type": "string", "description": "`create`: content of the new file."},
            "old_str": {
                "type": "string",
                "description": "`str_replace`: exact text to replace, unique in the file.",
            },
            "new_str": {
                "type": "string",
                "description": "`str_replace`: replacement text; `insert`: text to insert.",
            },
            "insert_line": {
                "type": "integer",
                "description": "`insert`: line after which to insert (0 = top).",
            },
            "view_range": {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": 2,
                "maxItems": 2,
                "description": "`view`: [start, end] line numbers, 1-based; end -1 for the end of the file.",
            },
        },
        ["command", "path"],
    ),
    function_schema(
        SUBMIT,
        "Finish: your changes to the repository are your answer. Call it once, when done.",
        {},
        [],
    ),
]

_SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}
_NEEDS = {"create": ["file_text"], "str_replace": ["old_str"], "insert": ["insert_line", "new_str"]}


class MalformedCall(ValueError):
    """A tool call the loop cannot run: a format error."""


@dataclass(frozen=True)
class Action:
    call: ToolCall
    args: dict[str, Any]

    @property
    def tool(self) -> str:
        return self.call.name


def parse_call(call: ToolCall) -> Action:
    """The call's arguments checked against its tool's schema, or `MalformedCall` saying why."""
    if call.name not in _SCHEMAS:
        raise MalformedCall(f"unknown tool {call.name!r}; the tools are {', '.join(_SCHEMAS)}")
    text = call.arguments.strip() or "{}"
    try:
        args = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedCall(f"{call.name}: arguments are not valid JSON ({exc})") from None
    if not isinstance(args, dict):
        raise MalformedCall(
            f"{call.name}: arguments must be a JSON object, not {type(args).__name__}"
        )
    schema = _SCHEMAS[call.name]
    required = list(schema["required"])
    if call.name == EDITOR and args.get("command") in _NEEDS:
        required += _NEEDS[args["command"]]
    for name in required:
        if name not in args:
            raise MalformedCall(f"{call.name}: missing argument {name!r}")
    for name, value in args.items():
        spec = schema["properties"].get(name)
        if spec is not None and not _fits(value, spec):
            raise MalformedCall(f"{call.name}: argument {name!r} must be {_describe(spec)}")
    return Action(call, args)


def _fits(value: Any, spec: dict[str, Any]) -> bool:
    kind = spec["type"]
    if kind == "string":
        return isinstance(value, str) and ("enum" not in spec or value in spec["enum"])
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "array":
        return (
            isinstance(value, list)
            and spec["minItems"] <= len(value) <= spec["maxItems"]
            and all(_fits(v, spec["items"]) for v in value)
        )
    return True


def _describe(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return "one of " + ", ".join(spec["enum"])
    if spec["type"] == "array":
        return f"a list of {spec['minItems']} integers"
    return f"a JSON {spec['type']}"


def truncate(text: str, limit: int) -> str:
    """At most `limit` characters of `text` (its head and tail), with a marker saying what was cut."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    cut = len(text) - limit
    return f"{text[:head]}\n[... {cut} characters cut: output over {limit} characters ...]\n{text[-tail:]}"


async def exec_bash(
    sandbox: Sandbox, args: dict[str, Any], cap: float, setup: str | None = None
) -> tuple[ExecResult, float]:
    """Run the command with a timeout of min(its own, cap), after `setup` (the task's shell
    environment, such as conda's `testbed`): its result, and the timeout it ran with."""
    asked = args.get("timeout")
    timeout = max(1.0, min(float(asked), cap) if asked is not None and asked > 0 else cap)
    command = f"{setup}\n{args['command']}" if setup else args["command"]
    return await sandbox.exec(command, timeout=timeout), timeout


async def run_bash(sandbox: Sandbox, args: dict[str, Any], cap: float, setup: str | None = None) -> str:
    """`exec_bash`, its output saying how the command ended."""
    return describe_result(*await exec_bash(sandbox, args, cap, setup))


def describe_result(result: ExecResult, timeout: float) -> str:
    output = result.output.rstrip("\n")
    if not output.strip():
        output = "(no output)"
    if result.timed_out:
        return f"{output}\n[the command timed out after {timeout:g} seconds and was killed]"
    if result.exit_code not in (0, None):
        return f"{output}\n[exit code {result.exit_code}]"
    return output
