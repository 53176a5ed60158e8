"""Makes the mini-swe-agent samples beside this file with the real mini-swe-agent (not a
dependency of factory; run it from a venv that has it):

    python -m venv /tmp/msa && /tmp/msa/bin/pip install mini-swe-agent==2.4.6
    /tmp/msa/bin/python tests/interchange/data/make_minisweagent_samples.py

Its `DefaultAgent` with the `DeterministicModel` it ships (scripted replies, its text-based
action format) and its `LocalEnvironment` work on a copy of the demo task set's semverkit repo
at a task's start state, with the SWE-bench config's templates, and `agent.save(...)` writes the
trajectory as its SWE-bench runner does. One task gets the gold fix, one a wrong fix.

The same agent with the models that call its `bash` tool (the way its litellm models work by
default in 2.x) writes minisweagent-2.4.6-toolcall/: `DeterministicToolcallModel` (chat
completions layout: `tool_calls`, `tool` results) on every semverkit task, each with its gold fix
but the last with a wrong one, and `DeterministicResponseAPIToolcallModel` (the Responses API
layout: `function_call` items, `function_call_output` results) on the last, with its gold fix.
Their files hold no tool schema: the importer must know mini-swe-agent's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import yaml
from minisweagent import package_dir
from minisweagent.agents.default import DefaultAgent
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.test_models import (
    DeterministicModel,
    DeterministicResponseAPIToolcallModel,
    DeterministicToolcallModel,
    make_output,
    make_toolcall_output,
)

HERE = Path(__file__).parent
DEMO = HERE.parents[2] / "pipelines" / "tasksets" / "demo"
OUT = HERE / "minisweagent-2.4.6"
TOOLCALL_OUT = HERE / "minisweagent-2.4.6-toolcall"
SOLVED, WRONG = "factory-demo__semverkit.caret-zero-minor", "factory-demo__semverkit.bump-minor-prerelease"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"


def git(repo: Path, *args: str, stdin: str | None = None) -> None:
    subprocess.run(["git", "-c", "user.name=x", "-c", "user.email=x@x", *args], cwd=repo, check=True, input=stdin,
                   text=True, capture_output=True)


def start_state(row: dict, into: Path) -> Path:
    repo = into / "repo"
    shutil.copytree(DEMO / "repos" / "semverkit", repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "apply", "-", stdin=row["patch"])  # the bug
    git(repo, "commit", "-qam", "start")
    return repo


def outputs(fix_command: str) -> list[dict]:
    step = "```mswea_bash_command\n{}\n```"
    return [
        make_output("THOUGHT: Let me look at the repository.\n\n" + step.format("ls"), [{"command": "ls"}], 0.01),
        make_output("THOUGHT: I will change the range code.\n\n" + step.format(fix_command), [{"command": fix_command}], 0.02),
        make_output("THOUGHT: Done; submitting.\n\n" + step.format(SUBMIT), [{"command": SUBMIT}], 0.01),
    ]


def toolcall_outputs(fix_command: str) -> list[dict]:
    steps = [("Let me look at the repository.", "ls"), ("I will change the code.", fix_command),
             ("Done; submitting.", SUBMIT)]
    out = []
    for k, (thought, command) in enumerate(steps):
        call = {"id": f"call_{k}", "type": "function", "function": {"name": "bash",
                                                                     "arguments": json.dumps({"command": command})}}
        out.append(make_toolcall_output(f"THOUGHT: {thought}", [call], [{"command": command, "tool_call_id": call["id"]}]))
    return out


def response_api_outputs(fix_command: str) -> list[dict]:
    """As `make_response_api_output` makes them, with the arguments JSON-encoded as an API sends them."""
    steps = [("Let me look at the repository.", "ls"), ("I will change the code.", fix_command),
             ("Done; submitting.", SUBMIT)]
    out = []
    for k, (thought, command) in enumerate(steps):
        items = [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"THOUGHT: {thought}"}]},
                 {"type": "function_call", "call_id": f"call_{k}", "name": "bash",
                  "arguments": json.dumps({"command": command})}]
        out.append({"object": "response", "output": items,
                    "extra": {"actions": [{"command": command, "tool_call_id": f"call_{k}"}], "cost": 0.01}})
    return out


def run(row: dict, model, out: Path, config: dict, wrong: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = start_state(row, Path(tmp))
        fix = f"git apply -R <<'PATCH'\n{row['patch']}PATCH"
        if wrong:
            fix = "sed -i 's/^\\(\\s*\\)return /\\1return  /' semverkit/version.py && " + "echo changed"
        agent = DefaultAgent(model(fix), LocalEnvironment(cwd=str(repo)), **{**config["agent"], "output_path": None})
        info = agent.run(row["problem_statement"])
        instance_id = row["instance_id"]
        path = out / instance_id / f"{instance_id}.traj.json"
        agent.save(path, {"info": {"exit_status": info.get("exit_status"), "submission": info.get("submission")},
                          "instance_id": instance_id})
        print(path, info.get("exit_status"), len(info.get("submission") or ""))


def main_toolcall(config: dict, rows: dict) -> None:
    shutil.rmtree(TOOLCALL_OUT, ignore_errors=True)
    semverkit = [r for r in rows.values() if r["instance_id"].startswith("factory-demo__semverkit.")]
    for k, row in enumerate(semverkit):
        run(row, lambda fix: DeterministicToolcallModel(outputs=toolcall_outputs(fix), model_name="deterministic_toolcall",
                                                        cost_per_call=0.01),
            TOOLCALL_OUT / "chat", config, wrong=k == len(semverkit) - 1)
    run(semverkit[-1], lambda fix: DeterministicResponseAPIToolcallModel(
        outputs=response_api_outputs(fix), model_name="deterministic_response_api", cost_per_call=0.01),
        TOOLCALL_OUT / "responses", config, wrong=False)


def main() -> None:
    config = yaml.safe_load((package_dir / "config" / "benchmarks" / "swebench.yaml").read_text())
    rows = {json.loads(line)["instance_id"]: json.loads(line) for line in (DEMO / "tasks.jsonl").read_text().splitlines()}
    shutil.rmtree(OUT, ignore_errors=True)
    for instance_id, wrong in ((SOLVED, False), (WRONG, True)):
        run(rows[instance_id], lambda fix: DeterministicModel(outputs=outputs(fix), model_name="deterministic"), OUT,
            config, wrong)
    main_toolcall(config, rows)


if __name__ == "__main__":
    main()
