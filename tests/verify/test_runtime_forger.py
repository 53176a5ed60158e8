"""A forger that runs the hidden tests itself, on the demo task set, on the host.

Code imported by the tests can run every twin of a hidden test under the unfixed code and
compare the outcomes: a copy that passes where its original fails (an inverted check), or
fails at an earlier statement (a changed value before the check the bug breaks), shows which
twin is real, and the forger then passes that one and fails the others. So for every
FAIL_TO_PASS test that the plan does not name as told apart, each copy must fail under the
unfixed code at the same statement as its original, and under the gold fix (soundness) each
original passes and each copy fails.

Where each test fails comes from the real reporting plugin and grader, as validation's
run of the empty patch gives it (`Verdict.fails_at` -> `Task.fails_at`); the plan made from
that is the one checked. The host's pytest runs the tests (no container: the controls are
planned on the host, and how tests fail does not depend on where they run).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from factory.records import Reason, Task
from factory.tasks.config import TasksConfig
from factory.tasks.sources import load_tasks
from factory.verify.classes import Classes
from factory.verify.controls import ControlPlan, hidden_files, plan_controls
from factory.verify.grading import TestRun, grade

DEMO = Path(__file__).parents[2] / "pipelines/tasksets/demo"
PLUGIN = Path(__file__).parents[2] / "factory/verify/container"
# as never validated (whatever this machine's cache holds): each test learns what it needs itself
TASKS = [t.model_copy(update={"fails_at": {}, "test_seconds": None})
         for t in load_tasks(TasksConfig(source=str(DEMO), skip_invalid=False)).tasks]


def run(repo: Path, plan: ControlPlan, tmp: Path) -> tuple[TestRun, dict[str, dict]]:
    """The plan's tests under the real reporting plugin: the graded run, and each test's call record."""
    report = tmp / "records.jsonl"
    with report.open("wb") as out:
        env = {**os.environ, "FACTORY_REPORT_FD": str(out.fileno()), "PYTHONPATH": f"{PLUGIN}{os.pathsep}{repo}",
               "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "factory_pytest_plugin", "-p", "no:cacheprovider",
                        "-c", os.devnull, "--rootdir", str(repo), *plan.ids], cwd=repo, env=env, pass_fds=(out.fileno(),),
                       capture_output=True, timeout=300)
    records = [json.loads(line) for line in report.read_text().splitlines()]
    calls = {r["nodeid"]: r for r in records if r.get("kind") == "test" and r["when"] == "call"}
    return TestRun.from_report({"records": records}, plan), calls


def outcome(run: TestRun, calls: dict[str, dict], nodeid: str) -> tuple[str, int | None]:
    """What a forger that runs a test sees of it: passed, or failed at which statement of its body."""
    return calls[nodeid]["outcome"], run.failed_at.get(nodeid)


@pytest.mark.parametrize("task", TASKS, ids=[t.instance_id.split("__")[1] for t in TASKS])
def test_copies_fail_under_the_unfixed_code_as_their_originals_do(task: Task, tmp_path: Path):
    repo = tmp_path / "repo"
    shutil.copytree(DEMO / "repos" / task.repo.split("/")[1], repo)
    subprocess.run(["git", "apply"], input=task.start.bug_patch, text=True, cwd=repo, check=True)
    sources = {p: (repo / p).read_text() for p in hidden_files(task, []) if (repo / p).is_file()}
    classes = Classes.parse("\n".join(f.read_text() for f in repo.rglob("*.py")))

    def planted(plan: ControlPlan) -> ControlPlan:
        for path, text in {**sources, **plan.files}.items():
            (repo / path).write_text(text)
        return plan

    # validation's empty patch: where each FAIL_TO_PASS test fails
    empty = planted(plan_controls(task, sources, random.Random(0)))
    verdict = grade(task, run(repo, empty, tmp_path)[0], [])
    assert verdict.reason is Reason.tests_failed and set(verdict.fails_at) <= set(task.FAIL_TO_PASS)
    assert verdict.fails_at, "validation learns where the bug strikes"
    validated = task.model_copy(update={"fails_at": verdict.fails_at})

    for seed in (1, 2):
        plan = planted(plan_controls(validated, sources, random.Random(seed), classes=classes))
        unfixed, calls = run(repo, plan, tmp_path)
        for control in plan.controls:
            if control.original not in task.FAIL_TO_PASS or control.original in plan.told_apart:
                continue
            original = plan.renamed.get(control.original, control.original)
            assert outcome(unfixed, calls, control.nodeid) == outcome(unfixed, calls, original), control
        subprocess.run(["git", "apply"], input=task.gold_patch, text=True, cwd=repo, check=True)
        gold, calls = run(repo, plan, tmp_path)
        fixed = grade(validated, gold, [])
        # every original passed and every control failed: in the process, or (a copy whose changed
        # literal is a blind check's, the same code as its original) on the host
        assert fixed.resolved and fixed.controls == len(plan.controls), fixed
        subprocess.run(["git", "apply", "-R"], input=task.gold_patch, text=True, cwd=repo, check=True)


def test_the_demo_task_set_leaves_few_failing_tests_to_a_forger_that_runs_them():
    """Told-apart FAIL_TO_PASS tests are named in the plan and the flag, and counted here: those
    whose only checks are booleans the bug breaks, raise-only tests with instances that pass, ..."""
    told, total = 0, 0
    for task in TASKS:
        repo = DEMO / "repos" / task.repo.split("/")[1]
        classes = Classes.parse("\n".join(f.read_text() for f in repo.rglob("*.py")))
        sources = {p: (repo / p).read_text() for p in hidden_files(task, [])}
        plan = plan_controls(task, sources, random.Random(0), classes=classes)
        told += len(plan.told_apart)
        total += len(task.FAIL_TO_PASS)
        assert all(i in task.FAIL_TO_PASS for i in plan.told_apart)
        assert bool(plan.told_apart) == ("may tell apart" in plan.weak)
    # unvalidated (inverted checks count as told apart), and the demo's issues name most expected
    # values (a reader of the issue tells the right one): 24 of 30 before blind checks. With them a
    # copy whose literal, row or raised class sits in a blind check is its original's code, where
    # the bug strikes at a blind check; where it strikes at a check in sight the copies must
    # differ there, and inverted checks always count as told apart: 10 of 30, 2026-12-01
    assert total == 30 and told <= 10, told


def test_a_statement_is_found_by_its_line_in_the_file_as_it_ran():
    text = "def test_a():\n    x = 1\n    assert (x ==\n            2)\n\n\nclass TestB:\n    def test_c(self):\n        assert 0\n"
    plan = ControlPlan(files={"t.py": text})
    assert [plan.statement_at("t.py::test_a", line) for line in (1, 2, 3, 4, 5)] == [None, 0, 1, 1, None]
    assert plan.statement_at("t.py::TestB::test_c", 9) == 0 and plan.statement_at("t.py::test_gone", 2) is None
