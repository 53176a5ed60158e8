"""Shared test data: a recognisable fake key, fast backoff, tool schemas, a conversation."""

from __future__ import annotations

from factory.records import Message

FAKE_KEY = "sk-fake-DO-NOT-LEAK-7f3a9c"
"""A recognisable key: tests assert it never shows up outside the auth header."""

FAST = {"backoff_initial": 0.01, "backoff_max": 0.05, "backoff_jitter": 0.01, "max_retries": 3}
"""Backoff settings that keep retry tests to milliseconds."""

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command.",
            "parameters": {
                "type": "object",
                "properties": {"cmd": {"type": "string"}},
                "required": ["cmd"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "submit",
            "description": "Finish.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
]

CONVERSATION = [
    Message(role="system", content="You fix bugs."),
    Message(role="user", content="The tests fail; fix it."),
]
