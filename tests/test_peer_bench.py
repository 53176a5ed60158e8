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


@pytest.fixture(scope="module")
def grader():
    return load_bench("peer_grader")


PYTEST_RA = """\
tests/test_ranges.py ..F                                                  [100%]
=========================== short test summary info ============================
PASSED tests/test_ranges.py::test_expansion[caret]
PASSED tests/test_ranges.py::test_expansion[caret-zero-major]
FAILED tests/test_ranges.py::test_membership[caret-zero-minor] - AssertionError: assert False
ERROR tests/test_ranges.py::test_fixture_broken
========================= 1 failed, 2 passed, 1 error in 0.12s =========================
"""


def test_the_grader_reads_pytests_short_summary_as_swe_bench_does(grader):
    log = f"PASSED tests/test_ranges.py::test_forged_before_the_run\n{grader.MARKER}\n{PYTEST_RA}"
    assert grader.statuses(log) == {
        "tests/test_ranges.py::test_expansion[caret]": "PASSED",
        "tests/test_ranges.py::test_expansion[caret-zero-major]": "PASSED",
        "tests/test_ranges.py::test_membership[caret-zero-minor]": "FAILED",
        "tests/test_ranges.py::test_fixture_broken": "ERROR",
    }  # what the start-up printed before the marker is not the tests'
    row = {"instance_id": "t", "FAIL_TO_PASS": ["tests/test_ranges.py::test_expansion[caret]"],
           "PASS_TO_PASS": ["tests/test_ranges.py::test_expansion[caret-zero-major]"]}
    assert grader.judge(row, log).resolved
    for missing in ("tests/test_ranges.py::test_membership[caret-zero-minor]", "tests/test_ranges.py::test_never_ran",
                    "tests/test_ranges.py::test_forged_before_the_run"):
        judged = grader.judge({**row, "PASS_TO_PASS": [missing]}, log)
        assert not judged.resolved and missing in judged.why


def test_the_grader_restores_and_runs_every_file_the_tests_name(grader):
    task = load_taskset(str(DEMO)).tasks[0]
    row = {"patch": task.start.bug_patch, "FAIL_TO_PASS": ["tests/b.py::x", "tests/a.py::C::y"], "PASS_TO_PASS": ["tests/b.py::z"]}
    script = grader.eval_script(row)
    assert "git checkout -q HEAD -- tests/a.py tests/b.py" in script
    assert "pytest -rA tests/a.py tests/b.py" in script
    assert base64.b64encode(task.start.bug_patch.encode()).decode() in script  # the start state: the bug applied


def test_a_cpu_account_adds_up_by_where_it_was_spent(bench):
    mini = bench.Account(process=1.0, cli=0.5, daemons=2.0, shims=0.25, sample=1.5, verify=0.0)
    grading = bench.Account(process=0.0, cli=0.25, daemons=1.0, shims=0.0, sample=0.0, verify=3.0)
    peer = mini + grading
    assert (peer.cli, peer.daemons, peer.verify) == (0.75, 3.0, 3.0)
    assert peer.total == mini.total + grading.total == 9.5
    assert bench.role({bench.LABEL_ATTEMPT: "verify-task.copy001"}) == "verify"
    assert bench.role({bench.LABEL_ATTEMPT: "task.copy001.standin.0"}) == bench.role({}) == "sample"
