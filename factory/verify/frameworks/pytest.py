"""pytest: hidden tests run by a trusted runner with controls, blind checks and a reporting
plugin (docs/verify.md, "The steps" 4-6).

    readback: the hidden test files and the repo's class headers, as the patches left them
    run:      controls planned into the hidden test files ─► one upload ─► root's setup (hide the
              originals, lock the repo) ─► runner.py drops to TEST_UID, runs pytest with the
              plugin ─► the report, after a marker in root's output ─► `grading.grade`
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import shlex
from importlib import resources

from factory.errors import SandboxError
from factory.records import Task, Verdict
from factory.sandbox.backend import DIFF_LIMIT
from factory.sandbox.printed import print_files, printed_files
from factory.verify import classes
from factory.verify.controls import ControlPlan, hidden_files, plan_controls
from factory.verify.frameworks.base import PRIVATE, TEST_UID, TRUSTED, Trial
from factory.verify.grading import TestRun, grade
from factory.verify.hiding import OUTSIDE, ImageFiles, hide_originals, outside_command

TRUSTED_INI = "[pytest]\n"
REPORT = "factory-verify-report"


class PytestFramework:
    def __init__(self) -> None:
        self._outside: dict[str, ImageFiles] = {}
        """Each image's files outside the repo that the setup script looks at (by image id)."""

    def readback(self, task: Task, touched: list[str]) -> str:
        return "\n".join([print_files(hidden_files(task, touched), "hidden"), classes.COMMAND,
                          print_files([classes.LISTING], "classes")])

    async def run(self, trial: Trial) -> Verdict:
        return grade(trial.task, await self._tests(trial), trial.flags)

    async def _tests(self, trial: Trial) -> TestRun:
        """Plant controls in the hidden test files (as they are now, the patches applied), upload
        everything the run needs at once, run, and read the report back."""
        task, sandbox = trial.task, trial.sandbox
        sources = {}
        for path, data in printed_files(trial.printed, "hidden", hidden_files(task, trial.touched)).items():
            if data is not None:
                with contextlib.suppress(UnicodeDecodeError):  # not text: no controls in it
                    sources[path] = data.decode()
        listing = printed_files(trial.printed, "classes", [classes.LISTING])[classes.LISTING] or b""
        tree = classes.Classes.parse(listing.decode(errors="replace"))
        # pure CPU, a tenth of a second on a large test file: off the event loop, so the other
        # sandboxes' commands and teacher calls go on meanwhile
        plan = await asyncio.to_thread(plan_controls, task, sources, random.SystemRandom(), classes=tree)
        package = resources.files("factory.verify") / "container"
        job = {
            "workdir": task.workdir, "uid": TEST_UID, "timeout": trial.limit, "ids": plan.ids,
            "touched": [p for p in trial.touched if p.endswith(".py")], "ini": f"{TRUSTED}/pytest.ini",
            "report": f"{PRIVATE}/report.json", "log": f"{PRIVATE}/pytest.log",
        }
        outside = await self._image_files(trial)
        await sandbox.write_files({  # one upload: every write is a round trip to the engine
            **plan.files,
            **trial.restored_files(),
            **{f"{PRIVATE}/original-{i}": sources[path] for i, path in enumerate(plan.files) if path in sources},
            **{f"{TRUSTED}/{name}": package.joinpath(name).read_text() for name in ("runner.py", "factory_pytest_plugin.py")},
            f"{TRUSTED}/pytest.ini": TRUSTED_INI,
            f"{PRIVATE}/job.json": json.dumps(job),
            f"{PRIVATE}/setup.sh": _setup_script(task.workdir, plan, outside, trial.removed()),
        }, owner="root")
        prefix = f"{task.test_cmd}; " if task.test_cmd else ""
        # this command line stays readable in /proc while the tests run: it names no test. The
        # report comes back after a marker line, in root's output (JSON escapes every newline in it)
        command = (f"sh {PRIVATE}/setup.sh && {{ {prefix}python3 -I -S {TRUSTED}/runner.py {PRIVATE}/job.json; }}; "
                   f"echo; echo {REPORT}; cat {job['report']}")
        running = asyncio.ensure_future(sandbox.exec(command, timeout=trial.limit + 120, user="root",
                                                     output_limit=DIFF_LIMIT))
        if not await trial.within_limit(running):
            return TestRun(timed_out=True, controls=plan.controls, renamed=plan.renamed, weak=plan.weak)
        result = running.result()
        before, marked, printed = result.output.partition(f"\n{REPORT}\n")
        try:
            report = json.loads(printed) if marked and not result.truncated_bytes else None
        except json.JSONDecodeError:
            report = None
        if not isinstance(report, dict):
            return TestRun(timed_out=result.timed_out, runner_failed=before[-2000:], controls=plan.controls,
                           renamed=plan.renamed, weak=plan.weak)
        return TestRun.from_report(report, plan, tree)

    async def _image_files(self, trial: Trial) -> ImageFiles:
        """Python files and git object stores of the image outside the repo: the same in every
        container of the image (a patch changes only the repo), so found once per image."""
        sandbox, task = trial.sandbox, trial.task
        key = sandbox.image_id or task.image
        if key not in self._outside:
            listed = await sandbox.exec(outside_command(task.workdir), timeout=600, user="root")
            if listed.exit_code != 0:
                raise SandboxError(f"could not list the files of {task.image}: {listed.output[-500:]}")
            self._outside[key] = ImageFiles.parse(await sandbox.read_file(OUTSIDE))
        return self._outside[key]


def _setup_script(workdir: str, plan: ControlPlan, outside: ImageFiles, removed: list[str]) -> str:
    """Root-only shell run before the tests: the files the patch made and the verdict leaves out
    (`removed`) gone, nothing the test user can read shows the test files as they were before
    the controls went in (`hiding`), and the code under test may read the repo but change
    nothing in it, tests included."""
    w = shlex.quote(workdir)
    lines = [
        "set -e", f"cd {w}", *(f"rm -f -- {shlex.quote(p)}" for p in removed), *hide_originals(workdir, plan.files, PRIVATE, outside),
        f"chown -R root:root {w} {TRUSTED}", f"chmod -R go-w {w} {TRUSTED}",
        f"chmod 700 /root {PRIVATE}", f"chmod 600 {PRIVATE}/*",
    ]
    return "\n".join(lines) + "\n"
