"""Tool schemas, what counts as a malformed call, bash output and the truncation marker."""

from __future__ import annotations

import json

import pytest

from factory.agent.tools import TOOLS, MalformedCall, describe_result, parse_call, truncate
from factory.protocols import ExecResult
from factory.records import ToolCall


def call(name: str, arguments: str | dict) -> ToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id="c1", name=name, arguments=text)


def test_tools_are_openai_function_schemas():
    assert [t["function"]["name"] for t in TOOLS] == ["bash", "str_replace_editor", "submit"]
    for tool in TOOLS:
        assert tool["type"] == "function"
        assert set(tool["function"]) == {"name", "description", "parameters"}
        assert tool["function"]["parameters"]["type"] == "object"
    editor = TOOLS[1]["function"]["parameters"]
    assert editor["properties"]["command"]["enum"] == [
        "view",
        "create",
        "str_replace",
        "insert",
        "undo_edit",
    ]
    assert editor["required"] == ["command", "path"]


@pytest.mark.parametrize(
    "name, arguments",
    [
        ("bash", {"command": "ls"}),
        ("bash", {"command": "ls", "timeout": 5}),
        ("str_replace_editor", {"command": "view", "path": "a.py", "view_range": [1, -1]}),
        ("str_replace_editor", {"command": "str_replace", "path": "a.py", "old_str": "x"}),
        (
            "str_replace_editor",
            {"command": "insert", "path": "a.py", "insert_line": 0, "new_str": "x"},
        ),
        ("str_replace_editor", {"command": "undo_edit", "path": "a.py"}),
        ("submit", {}),
        ("submit", ""),  # some servers send no arguments at all for a tool without parameters
    ],
)
def test_well_formed_calls_parse(name, arguments):
    action = parse_call(call(name, arguments))
    assert action.tool == name


@pytest.mark.parametrize(
    "name, arguments, says",
    [
        ("bash", '{"command": "ls"', "not valid JSON"),
        ("bash", '["ls"]', "must be a JSON object"),
        ("python", {"code": "1"}, "unknown tool 'python'"),
        ("bash", {"cmd": "ls"}, "missing argument 'command'"),
        ("bash", {"command": ["ls"]}, "'command' must be a JSON string"),
        ("bash", {"command": "ls", "timeout": "5"}, "'timeout' must be a JSON integer"),
        ("bash", {"command": "ls", "timeout": True}, "'timeout' must be a JSON integer"),
        ("str_replace_editor", {"path": "a.py"}, "missing argument 'command'"),
        ("str_replace_editor", {"command": "delete", "path": "a.py"}, "one of view, create"),
        (
            "str_replace_editor",
            {"command": "create", "path": "a.py"},
            "missing argument 'file_text'",
        ),
        (
            "str_replace_editor",
            {"command": "str_replace", "path": "a.py", "new_str": "y"},
            "'old_str'",
        ),
        (
            "str_replace_editor",
            {"command": "insert", "path": "a.py", "new_str": "y"},
            "'insert_line'",
        ),
        (
            "str_replace_editor",
            {"command": "view", "path": "a.py", "view_range": [1]},
            "a list of 2 integers",
        ),
    ],
)
def test_malformed_calls_say_what_is_wrong(name, arguments, says):
    with pytest.raises(MalformedCall) as caught:
        parse_call(call(name, arguments))
    assert says in str(caught.value)


def test_truncation_keeps_head_and_tail_and_says_how_much_was_cut():
    text = "".join(f"line {i}\n" for i in range(1000))
    cut = truncate(text, 200)
    assert cut.startswith("line 0\n") and cut.endswith("line 999\n")
    assert f"[... {len(text) - 200} characters cut: output over 200 characters ...]" in cut
    assert len(cut) < 200 + 80
    assert truncate("short", 200) == "short"


def test_command_results_say_how_they_ended():
    assert describe_result(ExecResult(0, "ok\n"), 10) == "ok"
    assert describe_result(ExecResult(0, ""), 10) == "(no output)"
    assert describe_result(ExecResult(2, "boom\n"), 10) == "boom\n[exit code 2]"
    timed_out = describe_result(ExecResult(None, "partial\n", timed_out=True), 7)
    assert timed_out == "partial\n[the command timed out after 7 seconds and was killed]"
