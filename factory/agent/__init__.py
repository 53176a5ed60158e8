"""The agent loop: a teacher works on a task in a sandbox through tools, until it submits.

    run_agent(task, teacher, sandbox, config) ─► Trajectory(messages, tools, patch, exit, turns)

Tools (tools.py): `bash`, `str_replace_editor` (editor.py), `submit`. Prompts (prompts.py)
are templates a pipeline may override. `replay.editor_calls` turns a diff into editor calls
(how the scripted teacher applies a fix).
"""

from factory.agent.editor import Editor
from factory.agent.loop import run_agent
from factory.agent.prompts import INSTANCE_TEMPLATE, SYSTEM_TEMPLATE, render_prompts
from factory.agent.replay import editor_calls, parse_patch
from factory.agent.tools import TOOLS, MalformedCall, parse_call, truncate

__all__ = [
    "INSTANCE_TEMPLATE",
    "SYSTEM_TEMPLATE",
    "TOOLS",
    "Editor",
    "MalformedCall",
    "editor_calls",
    "parse_call",
    "parse_patch",
    "render_prompts",
    "run_agent",
    "truncate",
]
