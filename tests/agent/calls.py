"""Tool calls as the FakeAPI's `openai_completion` takes them."""

from __future__ import annotations

SUBMIT = {"name": "submit", "arguments": {}}


def bash(command: str, **extra) -> dict:
    return {"name": "bash", "arguments": {"command": command, **extra}}


def edit(**arguments) -> dict:
    return {"name": "str_replace_editor", "arguments": arguments}
