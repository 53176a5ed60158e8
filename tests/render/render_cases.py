"""Conversations the render tests share; each golden file in golden/ is named after one."""

from __future__ import annotations

from typing import Any

from factory.records import Message, ToolCall

BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command in the repository.",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
    },
}
EDIT = {
    "type": "function",
    "function": {
        "name": "write_file",
        "description": "Écrire un fichier.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
        },
    },
}


def sys(text: str) -> Message:
    return Message(role="system", content=text)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def tool(call_id: str, text: str) -> Message:
    return Message(role="tool", content=text, tool_call_id=call_id)


def call(call_id: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def asst(content: str = "", reasoning: str | None = None, calls: list[ToolCall] | None = None) -> Message:
    return Message(role="assistant", content=content, reasoning=reasoning, tool_calls=calls or [])


CASES: dict[str, tuple[list[Message], list[dict[str, Any]]]] = {
    "tools": (
        [
            sys("You are a careful engineer."),
            user("Fix the failing test."),
            asst("Let me run the tests.", "Start with the tests.", [call("c1", "bash", '{"cmd": "pytest -x"}')]),
            tool("c1", "1 failed, 3 passed"),
            asst("Fixed.", "The fix is done."),
        ],
        [BASH],
    ),
    "parallel_calls": (
        [
            user("Where is the config?"),
            asst("", "Look in two places.", [
                call("a", "bash", '{"cmd":"ls"}'),
                call("b", "bash", '{"cmd": "cat setup.cfg"}'),
            ]),
            tool("a", "setup.cfg\nsrc"),
            tool("b", "[metadata]\nname = demo"),
            asst("It is setup.cfg.", "Found it."),
        ],
        [BASH],
    ),
    "non_ascii": (
        [
            user("Écris la note."),
            asst("", "Écrire.", [
                call("w", "write_file", '{"path": "docs/caf\\u00e9.md", "text": "na\\u00efve \\u65e5\\u672c \\u2615"}'),
            ]),
            tool("w", "écrit ✓"),
            asst("C'est fait — ☕.", "Terminé."),
        ],
        [EDIT],
    ),
    "no_reasoning": (
        [
            sys("Be brief."),
            user("Say hi."),
            asst("Hi!"),
        ],
        [],
    ),
    "inline_think": (
        [
            user("Is it done?"),
            asst("<think>\nCheck first.\n</think>\n\nAll good."),
        ],
        [],
    ),
    "two_queries": (
        [
            user("What is 2+2?"),
            asst("4", "Add them."),
            user("And 3+3?"),
            asst("6", "Add again."),
        ],
        [],
    ),
}
