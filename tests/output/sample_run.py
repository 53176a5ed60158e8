"""A small finished run, built by hand: three tasks, three teachers, every kind of outcome."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from factory.output import TokenizedRow
from factory.records import (
    Attempt,
    AttemptKey,
    Exit,
    Message,
    Reason,
    Task,
    ToolCall,
    Trajectory,
    Turn,
    Usage,
    Verdict,
)

RUN_ID = "demo-2025-01"
HF = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ" + "01234567"
ANTHROPIC = "sk-ant-" + "api03-" + "abcdEFGH1234ijklMNOP5678-qrstUVWX_yz90"

PIPELINE_YAML = f"""\
# demo pipeline
name: demo
tasks:
  source: local
  path: pipelines/tasksets/demo
teachers:
  - name: claude
    kind: anthropic
    model: claude-sonnet-4-5
    api_key: {ANTHROPIC}
  - name: gpt
    kind: openai
    model: gpt-5
attempts_per_task: 4
license: apache-2.0
filters:
  cap: {{per_task: 3}}
"""

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "bash", "description": "Run a shell command.",
     "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}},
    {"type": "function", "function": {"name": "str_replace_editor", "description": "View and edit files.",
     "parameters": {"type": "object", "properties": {
         "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "undo_edit"]},
         "path": {"type": "string"}, "view_range": {"type": "array", "items": {"type": "integer"}},
         "old_str": {"type": "string"}, "new_str": {"type": "string"}}, "required": ["command", "path"]}}},
    {"type": "function", "function": {"name": "submit", "description": "Finish.",
     "parameters": {"type": "object", "properties": {}}}},
]

TASKS = {
    f"acme__widgets-{i}": Task(
        instance_id=f"acme__widgets-{i}",
        repo="acme/widgets",
        problem_statement=f"Widget {i} returns the wrong size.",
        image="factory/acme-widgets:latest",
        FAIL_TO_PASS=[f"tests/test_widgets.py::test_size_{i}"],
        PASS_TO_PASS=["tests/test_widgets.py::test_ok"],
    )
    for i in range(1, 4)
}

MODELS = {"claude": "claude-sonnet-4-5", "gpt": "gpt-5", "scripted": "scripted-v1"}


def patch_for(value: str, path: str = "widgets/size.py") -> str:
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,2 @@\n def size():\n"
        f"-    return 0\n+    return {value}\n"
    )


def trajectory(instance_id: str, teacher: str, steps: list[tuple[str, dict[str, Any]]], *, patch: str,
               exit: Exit = Exit.submitted, outputs: dict[int, str] | None = None) -> Trajectory:
    messages = [
        Message(role="system", content="You are a software engineer fixing a bug in a repository at /testbed."),
        Message(role="user", content=TASKS[instance_id].problem_statement),
    ]
    for i, (tool, args) in enumerate(steps):
        messages.append(Message(role="assistant", content=f"Next I {tool} ({i}).",
                                reasoning="thinking..." if teacher == "claude" else None,
                                tool_calls=[ToolCall(id=f"call_{i}", name=tool, arguments=json.dumps(args))]))
        messages.append(Message(role="tool", tool_call_id=f"call_{i}", name=tool,
                                content=(outputs or {}).get(i, f"ok: {tool} {i}")))
    return Trajectory(
        instance_id=instance_id,
        teacher=teacher,
        model=MODELS[teacher],
        messages=messages,
        tools=TOOLS,
        patch=patch,
        exit=exit,
        scripted=teacher == "scripted",
        turns=[Turn(usage=Usage(input_tokens=1000, output_tokens=100), cost_usd=0.01) for _ in steps],
    )


def solve(variant: str, extra: int = 0) -> list[tuple[str, dict[str, Any]]]:
    return (
        [("bash", {"command": f"grep -rn size widgets/ # {variant}"})]
        + [("bash", {"command": f"python -c 'print({variant}, {k})'"}) for k in range(extra)]
        + [("str_replace_editor", {"command": "view", "path": "/testbed/widgets/size.py"}),
           ("str_replace_editor", {"command": "str_replace", "path": "/testbed/widgets/size.py",
                                   "old_str": "return 0", "new_str": f"return {variant}"}),
           ("bash", {"command": "python -m pytest tests -q"}),
           ("submit", {})]
    )


def attempt(instance_id: str, teacher: str, index: int, traj: Trajectory | None, *, resolved: bool = True,
            error_class: str | None = None) -> Attempt:
    verdict = None if traj is None else Verdict(resolved=resolved, reason=None if resolved else Reason.tests_failed)
    return Attempt(key=AttemptKey(run_id=RUN_ID, instance_id=instance_id, teacher=teacher, index=index),
                   repo="acme/widgets", trajectory=traj, verdict=verdict, error_class=error_class)


def demo_attempts(scripted: bool = False) -> list[Attempt]:
    w1, w2, w3 = TASKS
    loop = [("bash", {"command": "python -m pytest tests -q"})] * 10 + [("submit", {})]
    out = [
        # task 1: five solutions, two with the same fix -> dedup, then the cap keeps three
        attempt(w1, "claude", 0, trajectory(w1, "claude", solve("a"), patch=patch_for("1"))),
        attempt(w1, "claude", 1, trajectory(w1, "claude", solve("b", 1), patch=patch_for(" 1 "))),
        attempt(w1, "gpt", 0, trajectory(w1, "gpt", solve("c", 2), patch=patch_for("2"))),
        attempt(w1, "gpt", 1, trajectory(w1, "gpt", solve("d", 3), patch=patch_for("3"))),
        attempt(w1, "claude", 2, trajectory(w1, "claude", solve("e", 4), patch=patch_for("4"))),
        # task 2: a loop, a failure, an outage, and a good run with a key in a tool output
        attempt(w2, "gpt", 0, trajectory(w2, "gpt", loop, patch=patch_for("5"))),
        attempt(w2, "claude", 0, trajectory(w2, "claude", solve("f"), patch=patch_for("6")), resolved=False),
        attempt(w2, "claude", 1, None, error_class="SandboxStartError"),
        attempt(w2, "gpt", 1, trajectory(w2, "gpt", solve("g"), patch=patch_for("7"),
                                         outputs={0: f"widgets/config.py:3: HF_TOKEN = '{HF}'"})),
        # task 3: resolved but cut off by the turn limit
        attempt(w3, "claude", 0, trajectory(w3, "claude", solve("h"), patch=patch_for("8"), exit=Exit.max_turns)),
    ]
    if scripted:
        out.append(attempt(w3, "scripted", 0, trajectory(w3, "scripted", solve("i"), patch=patch_for("9"))))
    return out


def fake_tokenize(attempts: list[Attempt]) -> list[TokenizedRow]:
    """A stand-in renderer: one token per 4 characters of each message, assistant tokens masked in."""
    rows = []
    for a in attempts:
        assert a.trajectory is not None
        ids: list[int] = []
        mask: list[int] = []
        for m in a.trajectory.messages:
            text = m.content + "".join(c.arguments for c in m.tool_calls)
            n = max(1, len(text) // 4)
            ids += [int(hashlib.md5(f"{text}{k}".encode()).hexdigest()[:4], 16) for k in range(n)]
            mask += [1 if m.role == "assistant" else 0] * n
        rows.append(TokenizedRow(key=a.key, input_ids=ids, assistant_masks=mask))
    return rows


def run_folder(tmp_path, output: str = "", attempts: list[Attempt] | None = None):
    """A run folder as `factory run` leaves it (run.json, pipeline.yaml, dataset/), made without a run."""
    from factory.output import CardMeta, build_dataset
    from factory.run.folder import RunStore

    demo = Path(__file__).parents[2] / "pipelines" / "tasksets" / "demo"
    text = (f"name: demo\ntasks: {{source: {demo}}}\n"
            "teachers: [{kind: scripted, model: scripted-demo}]\n" + output)
    (tmp_path / "demo.yaml").write_text(text)
    store = RunStore(tmp_path / "runs" / RUN_ID)  # the id the sample attempts carry
    store.start(text, "factory run demo.yaml", str(tmp_path / "demo.yaml"))
    attempts = demo_attempts() if attempts is None else attempts
    for one in attempts:
        store.save(one)
    build_dataset(attempts, text, store.dataset_dir, tasks=TASKS, meta=CardMeta(task_set="demo"))
    return store
