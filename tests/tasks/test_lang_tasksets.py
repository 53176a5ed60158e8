"""The Go, JavaScript (mocha; jest), Java and Rust demo task sets, checked in their own images on the real engine
without factory's verifier: each bug patch makes exactly its FAIL_TO_PASS tests fail and keeps
every PASS_TO_PASS test passing, as the task's result reader reads the task's own test command;
the gold fix (the reversed bug patch) brings back the snapshot, on which every test passes.

One container per task set: the clean suite runs once, then each task's bug is applied, run and
reverted with git, so a set costs its suite's runs and no more than one container start.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from factory.config import VerifierConfig
from factory.records import Task, TestStatus
from factory.sandbox.docker import engine
from factory.sandbox.images import ensure_images, image_settings
from factory.tasks import load_taskset
from factory.tasks.validate import validate
from factory.verify import DockerVerifier
from factory.verify.results import grade, read
from tests.swesmith_layout import _tar_one

pytestmark = pytest.mark.docker
TASKSETS = Path(__file__).parents[2] / "pipelines/tasksets"
LANGUAGES = {"demo-go": "go", "demo-js": "javascript", "demo-jest": "javascript", "demo-java": "java", "demo-rust": "rust"}
# The report: the named file in REPORT_DIR, or the command's output (as the command framework has it).
RUN = r"""
export REPORT_DIR=/tmp/factory-report TMPDIR=/tmp
cd {workdir} && rm -rf "$REPORT_DIR" && mkdir -p "$REPORT_DIR"
bash -c "$0" > /tmp/factory-test-output 2>&1; code=$?
if [ -z {report} ]; then cat /tmp/factory-test-output; else cat "$REPORT_DIR"/{report}; fi
exit $code
"""


class Bench:
    """One container of a task set's image, as root, with no network."""

    def __init__(self, task: Task):
        self.workdir = task.workdir
        self.container = engine.client().containers.create(
            task.image, ["sleep", "1800"], network_mode="none", user="root",
            labels=engine.labels("test-lang-tasksets", task.image))
        self.container.start()

    def sh(self, script: str) -> tuple[int, str]:
        code, out = self.container.exec_run(["bash", "-c", script], workdir=self.workdir)
        return code, out.decode(errors="replace")

    def apply(self, patch: str) -> None:
        self.container.put_archive("/tmp", _tar_one("factory-test.patch", patch.encode()))
        code, out = self.sh("git apply /tmp/factory-test.patch")
        assert code == 0, out

    def run_tests(self, task: Task):
        report = task.tests.report or "''"
        code, out = self.container.exec_run(
            ["bash", "-c", RUN.format(workdir=self.workdir, report=report), task.tests.command], workdir=self.workdir)
        return read(task.tests.results, out, exit_code=code)

    def close(self) -> None:
        self.container.remove(force=True)


@pytest.fixture(scope="module", params=sorted(LANGUAGES))
def taskset(request, docker_client):
    folder = TASKSETS / request.param
    tasks = load_taskset(str(folder), skip_invalid=False).tasks
    ensure_images(tasks, folder)
    return request.param, folder, tasks


def test_rows_load_with_their_language_and_test_command(taskset):
    name, _, tasks = taskset
    assert len(tasks) >= 4
    assert {t.language for t in tasks} == {LANGUAGES[name]}
    assert all(t.tests.framework == "command" and t.tests.command and t.tests.results for t in tasks)
    assert all(t.gold_patch and t.start.bug_patch and t.FAIL_TO_PASS and t.PASS_TO_PASS for t in tasks)


def test_every_task_fails_as_stated_under_its_bug_and_passes_under_its_gold_fix(taskset):
    _, _, tasks = taskset
    bench = Bench(tasks[0])
    try:
        clean = bench.run_tests(tasks[0])
        for task in tasks:
            bench.apply(task.start.bug_patch)
            bugged = grade(task.FAIL_TO_PASS, task.PASS_TO_PASS, bench.run_tests(task))
            failed = {t for t, s in bugged.tests.items() if s != TestStatus.passed}
            assert failed == set(task.FAIL_TO_PASS), task.instance_id
            bench.apply(task.gold_patch)
            # the gold fix brings back the snapshot byte for byte: its run is the clean run
            assert bench.sh("git status --porcelain --untracked-files=no") == (0, ""), task.instance_id
            fixed = grade(task.FAIL_TO_PASS, task.PASS_TO_PASS, clean)
            assert fixed.passed, (task.instance_id, fixed.problems)
    finally:
        bench.close()


def test_the_rust_set_is_in_swesmiths_layout_root_only_at_testbed(docker_client):
    folder = TASKSETS / "demo-rust"
    assert image_settings(folder).root_only
    task = load_taskset(str(folder), skip_invalid=False).tasks[0]
    ensure_images([task], folder)
    script = "getent passwd agent || echo no-agent; awk -F: '$3 >= 1000 && $3 != 65534' /etc/passwd | wc -l; pwd; git rev-list --count HEAD"
    out = docker_client.containers.run(task.image, ["bash", "-c", script], remove=True, network_mode="none",
                                       labels=engine.labels("test-lang-tasksets", "layout"))
    assert out.decode().split() == ["no-agent", "0", "/testbed", "1"]


def test_every_task_validates_through_the_verifier(taskset):
    """`factory tasks validate` of the set: in a fresh container per check, the gold fix resolves
    and the empty patch does not, read by the `command` framework with the task's own reader."""
    _, _, tasks = taskset
    checks = asyncio.run(validate(DockerVerifier(VerifierConfig(timeout=300)), tasks, jobs=2))
    assert {c.instance_id: (c.status, c.why) for c in checks} == {t.instance_id: ("valid", "") for t in tasks}
