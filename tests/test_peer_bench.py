"""bench/peer_bench.py's stand-in teacher: one script, in factory's tool calls and in mini-swe-agent's text."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from factory.agent.tools import TOOLS
from factory.tasks import load_taskset
from tests.bench_module import load_bench

DEMO = Path(__file__).parent.parent / "pipelines/tasksets/demo"
MINI_ACTION = r"```mswea_bash_command\s*\n(.*?)\n```"  # LitellmTextbasedModelConfig.action_regex, 2.4.6


@pytest.fixture(scope="module")
def bench():
    return load_bench("peer_bench")


def _request(task, turns: int, tools: bool) -> dict:
    messages = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": f"Fix:\n{task.problem_statement}"}]
    for i in range(turns):
        messages += [{"role": "assistant", "content": f"step {i}"}, {"role": "user", "content": "<output></output>"}]
    return {"model": "stand-in", "messages": messages, **({"tools": TOOLS} if tools else {})}


def test_both_formats_carry_the_same_four_commands(bench):
    task = load_taskset(str(DEMO)).tasks[0]
    patches = {task.problem_statement: task.start.bug_patch}
    for turn in range(bench.TURNS):
        factory = bench.answer(_request(task, turn, tools=True), patches)["choices"][0]["message"]
        mini = bench.answer(_request(task, turn, tools=False), patches)["choices"][0]["message"]
        calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in factory["tool_calls"]]
        (action,) = re.findall(MINI_ACTION, mini["content"], re.DOTALL)
        command = calls[0][1]["command"]
        if turn < bench.TURNS - 1:
            assert calls == [("bash", {"command": command})] and action == command
        else:  # the fix, then each tool's way to submit
            fixed = re.fullmatch(r'echo (\S+) \| base64 -d \| git apply -R && echo "# attempt (.+)" >> (\S+)', command)
            assert base64.b64decode(fixed.group(1)).decode() == task.start.bug_patch
            assert fixed.group(2) == "$(cat /proc/sys/kernel/random/uuid)"  # every attempt's patch differs
            assert fixed.group(3) in task.start.bug_patch
            assert calls[1] == ("submit", {})
            assert action == f"{command} && echo {bench.SUBMIT} && git diff"


def test_an_unknown_task_is_refused(bench):
    task = load_taskset(str(DEMO)).tasks[0]
    with pytest.raises(ValueError, match="no known problem statement"):
        bench.answer(_request(task, 0, tools=True), {"another statement": task.start.bug_patch})
