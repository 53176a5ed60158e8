"""Hand-built trajectories for filter tests: a run is a list of actions, each (tool, arguments)."""

from __future__ import annotations

import json
from typing import Any

from factory.records import Attempt, AttemptKey, Exit, Message, ToolCall, Trajectory, Verdict

Action = tuple[str, dict[str, Any] | str]


def bash(command: str) -> Action:
    return ("bash", {"command": command})


def view(path: str, view_range: list[int] | None = None) -> Action:
    args: dict[str, Any] = {"command": "view", "path": path}
    if view_range is not None:
        args["view_range"] = view_range
    return ("str_replace_editor", args)


def edit(path: str, old: str, new: str) -> Action:
    return ("str_replace_editor", {"command": "str_replace", "path": path, "old_str": old, "new_str": new})


def submit() -> Action:
    return ("submit", {})


def patch_for(line: str, path: str = "src/mod.py") -> str:
    return (
        f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,3 +1,3 @@\n def f():\n-    return 1\n+    {line}\n"
    )


def trajectory(
    steps: list[Action],
    *,
    patch: str = "",
    exit: Exit = Exit.submitted,
    teacher: str = "claude",
    instance_id: str = "acme__widgets-1",
    outputs: list[str] | None = None,
    scripted: bool = False,
) -> Trajectory:
    messages = [
        Message(role="system", content="You are a coding agent."),
        Message(role="user", content="Fix the bug in widgets."),
    ]
    for i, (tool, args) in enumerate(steps):
        arguments = args if isinstance(args, str) else json.dumps(args)
        messages.append(
            Message(role="assistant", content=f"step {i}", tool_calls=[ToolCall(id=f"call_{i}", name=tool, arguments=arguments)])
        )
        output = outputs[i] if outputs and i < len(outputs) else f"output {i}"
        messages.append(Message(role="tool", content=output, tool_call_id=f"call_{i}", name=tool))
    return Trajectory(
        instance_id=instance_id,
        teacher=teacher,
        model=f"{teacher}-model",
        messages=messages,
        patch=patch,
        exit=exit,
        scripted=scripted,
    )


def attempt(
    steps: list[Action] | None = None,
    *,
    instance_id: str = "acme__widgets-1",
    teacher: str = "claude",
    index: int = 0,
    resolved: bool = True,
    patch: str | None = None,
    exit: Exit = Exit.submitted,
    outputs: list[str] | None = None,
    run_id: str = "run-1",
) -> Attempt:
    steps = steps if steps is not None else [bash("ls"), edit("src/mod.py", "return 1", "return 2"), submit()]
    return Attempt(
        key=AttemptKey(run_id=run_id, instance_id=instance_id, teacher=teacher, index=index),
        repo="acme/widgets",
        trajectory=trajectory(
            steps,
            patch=patch if patch is not None else patch_for(f"return {index + 2}"),
            exit=exit,
            teacher=teacher,
            instance_id=instance_id,
            outputs=outputs,
        ),
        verdict=Verdict(resolved=resolved),
    )


def distinct(n: int, prefix: str = "cmd") -> list[Action]:
    return [bash(f"{prefix} {i}") for i in range(n)]
