"""mini-swe-agent trajectory files for tests, in the 2.x layout its `save_traj` writes today:
`{"info": {model_stats, config, mini_version, exit_status, submission}, "messages": [...],
"trajectory_format": "mini-swe-agent-1.1"}`, text-format bash actions in fenced blocks, and the
submission command's echo as the last action."""

from __future__ import annotations

import json
from pathlib import Path

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"


def action(thought: str, command: str) -> dict:
    return {"role": "assistant", "content": f"THOUGHT: {thought}\n\n```mswea_bash_command\n{command}\n```",
            "extra": {"actions": [{"command": command}]}}


def observation(output: str, returncode: int = 0) -> dict:
    return {"role": "user", "content": f"<returncode>{returncode}</returncode>\n<output>\n{output}\n</output>"}


def trajectory(instance_id: str, problem: str, patch: str, *, exit_status: str = "Submitted",
               model: str = "anthropic/claude-sonnet-4-5-20250929", cost: float = 0.12) -> dict:
    messages = [
        {"role": "system", "content": "You are a helpful assistant that can interact with a computer.\n\n"
         "Your response must contain exactly ONE bash code block with ONE command.\nTo finish, issue "
         "the following command: `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`"},
        {"role": "user", "content": f"<pr_description>\n{problem}\n</pr_description>"},
        action("Let me look at the repository first.", "ls"),
        observation("semverkit\ntests"),
        action("I fixed the bug; submitting.", SUBMIT),
        observation(patch),
        {"role": "exit", "content": patch, "extra": {"exit_status": exit_status, "submission": patch}},
    ]
    return {
        "info": {
            "model_stats": {"instance_cost": cost, "api_calls": 2},
            "config": {"agent": {"step_limit": 250}, "agent_type": "minisweagent.agents.default.DefaultAgent",
                       "model": {"model_name": model}, "model_type": "minisweagent.models.litellm_model.LitellmModel",
                       "environment": {"image": "x"}, "environment_type": "minisweagent.environments.docker.DockerEnvironment"},
            "mini_version": "2.4.6",
            "exit_status": exit_status,
            "submission": patch,
        },
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1.1",
        "instance_id": instance_id,
    }


def write(folder: Path, instance_id: str, data: dict) -> Path:
    """`folder/<id>/<id>.traj.json`, where mini-swe-agent's SWE-bench runner puts it."""
    path = folder / instance_id / f"{instance_id}.traj.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path
