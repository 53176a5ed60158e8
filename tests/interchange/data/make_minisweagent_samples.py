"""Makes the mini-swe-agent samples beside this file with the real mini-swe-agent (not a
dependency of factory; run it from a venv that has it):

    python -m venv /tmp/msa && /tmp/msa/bin/pip install mini-swe-agent==2.4.6
    /tmp/msa/bin/python tests/interchange/data/make_minisweagent_samples.py

Its `DefaultAgent` with the `DeterministicModel` it ships (scripted replies, its text-based
action format) and its `LocalEnvironment` work on a copy of the demo task set's semverkit repo
at a task's start state, with the SWE-bench config's templates, and `agent.save(...)` writes the
trajectory as its SWE-bench runner does. One task gets the gold fix, one a wrong fix.
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
from minisweagent.models.test_models import DeterministicModel, make_output

HERE = Path(__file__).parent
DEMO = HERE.parents[2] / "pipelines" / "tasksets" / "demo"
OUT = HERE / "minisweagent-2.4.6"
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


def main() -> None:
    config = yaml.safe_load((package_dir / "config" / "benchmarks" / "swebench.yaml").read_text())
    rows = {json.loads(line)["instance_id"]: json.loads(line) for line in (DEMO / "tasks.jsonl").read_text().splitlines()}
    shutil.rmtree(OUT, ignore_errors=True)
    for instance_id, wrong in ((SOLVED, False), (WRONG, True)):
        row = rows[instance_id]
        with tempfile.TemporaryDirectory() as tmp:
            repo = start_state(row, Path(tmp))
            fix = f"git apply -R <<'PATCH'\n{row['patch']}PATCH"
            if wrong:
                fix = "sed -i 's/^\\(\\s*\\)return /\\1return  /' semverkit/version.py && " + "echo changed"
            agent = DefaultAgent(DeterministicModel(outputs=outputs(fix), model_name="deterministic"),
                                 LocalEnvironment(cwd=str(repo)), **{**config["agent"], "output_path": None})
            info = agent.run(row["problem_statement"])
            path = OUT / instance_id / f"{instance_id}.traj.json"
            agent.save(path, {"info": {"exit_status": info.get("exit_status"), "submission": info.get("submission")},
                              "instance_id": instance_id})
            print(path, info.get("exit_status"), len(info.get("submission") or ""))


if __name__ == "__main__":
    main()
