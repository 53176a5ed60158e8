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
import re
import shlex
from dataclasses import dataclass
from importlib import resources

from factory.errors import SandboxError
from factory.records import Task, Verdict
from factory.sandbox.backend import DIFF_LIMIT
from factory.sandbox.git import FACTORY_DIR, GIT
from factory.sandbox.printed import print_files, printed_files
from factory.verify import classes
from factory.verify.controls import ControlPlan, hidden_files, plan_controls, split_id
from factory.verify.frameworks import pytest_config
from factory.verify.frameworks.base import PRIVATE, TEST_UID, TRUSTED, Trial, lock
from factory.verify.grading import TestRun, grade
from factory.verify.hiding import OUTSIDE, ImageFiles, hide_originals, outside_command

REPORT = "factory-verify-report"
PLUGIN = "factory_pytest_plugin.py"
_PLUGIN_SOURCE = (resources.files("factory.verify") / "container" / PLUGIN).read_bytes()
CHANGED = f"{FACTORY_DIR}/changed.diff"
"""Where the readback puts `git diff -U0` of the patch's Python files (root's folder)."""
COMPILED = "factory-compiled"
COMPILE = (f"import py_compile, sys; print('{COMPILED} ' + py_compile.compile(sys.argv[1], doraise=True, "
           "invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH))")
"""Python (3.7+) that compiles the plugin (argv[1]) to bytecode checked against the source's hash
(as uploaded, its times are not the source's) and prints where it put it. The test runs import
that, not the source: each would otherwise compile its ~800 lines anew (the trusted folder is
root's and the tests run without writing bytecode)."""


@dataclass(frozen=True)
class _Image:
    """What the runs of an image need of it that is the same in every container of the image."""

    outside: ImageFiles
    """Its files outside the repo that the setup script looks at."""
    bytecode: dict[str, bytes]
    """The plugin compiled by its test interpreter, by path (none for an interpreter before 3.7)."""


class PytestFramework:
    def __init__(self) -> None:
        self._images: dict[str, _Image] = {}
        """What each image's runs need of it (by image id)."""

    def readback(self, task: Task, touched: list[str]) -> str:
        # the lines the patch changed in its Python files, against the start state in factory's
        # index: the plugin's probe tells code the patch wrote from the repo's own by them
        sources = " ".join(shlex.quote(f":(literal){p}") for p in touched if p.endswith(".py"))
        changed = f"{{ {GIT} diff -U0 --no-color --no-ext-diff --no-textconv --no-renames --src-prefix=a/ --dst-prefix=b/ -- {sources} > {CHANGED} 2>/dev/null || :; }}"
        return "\n".join([print_files(hidden_files(task, touched), "hidden"), classes.COMMAND,
                          print_files([classes.LISTING], "classes"), print_files(_config_files(task), "config"),
                          *([changed, print_files([CHANGED], "changed")] if sources else [])])

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
        configs = printed_files(trial.printed, "config", _config_files(task))
        settings = pytest_config.repo_settings({path: trial.restore.get(path, data) for path, data in configs.items()})
        job = {
            "workdir": task.workdir, "uid": TEST_UID, "timeout": trial.limit, "ids": plan.ids,
            "touched": [p for p in trial.touched if p.endswith(".py")], "ini": f"{TRUSTED}/pytest.ini",
            "report": f"{PRIVATE}/report.json", "log": f"{PRIVATE}/pytest.log",
            "warnings": settings.warning_options,
            "changed": changed_lines((printed_files(trial.printed, "changed", [CHANGED])[CHANGED] or b"").decode(
                errors="replace")),
        }
        image = await self._image(trial)
        await sandbox.write_files({  # one upload: every write is a round trip to the engine
            **plan.files,
            **trial.restored_files(),
            **{f"{PRIVATE}/original-{i}": sources[path] for i, path in enumerate(plan.files) if path in sources},
            f"{TRUSTED}/runner.py": package.joinpath("runner.py").read_bytes(),
            f"{TRUSTED}/{PLUGIN}": _PLUGIN_SOURCE,
            **image.bytecode,
            f"{TRUSTED}/pytest.ini": settings.ini(),
            f"{PRIVATE}/job.json": json.dumps(job),
            f"{PRIVATE}/setup.sh": _setup_script(task.workdir, plan, image.outside, trial.removed()),
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

    async def _image(self, trial: Trial) -> _Image:
        """What the run needs of the trial's image: the same in every container of it (a patch
        changes only the repo), so found once per image, in its first verification."""
        sandbox, task = trial.sandbox, trial.task
        key = sandbox.image_id or task.image
        if key not in self._images:
            await sandbox.write_files({f"{TRUSTED}/{PLUGIN}": _PLUGIN_SOURCE}, owner="root")
            prefix = f"{task.test_cmd}; " if task.test_cmd else ""
            # -I -S: nothing of the repo or its environment runs. An interpreter without hash-based
            # bytecode (before 3.7) compiles nothing, and its test runs compile the plugin themselves
            compile_plugin = f"{{ {prefix}python3 -I -S -c {shlex.quote(COMPILE)} {TRUSTED}/{PLUGIN}; }} 2>/dev/null"
            listed = await sandbox.exec(f"{outside_command(task.workdir)} && {{ {compile_plugin} || true; }}",
                                        timeout=600, user="root")
            if listed.exit_code != 0:
                raise SandboxError(f"could not list the files of {task.image}: {listed.output[-500:]}")
            bytecode = {}
            if (compiled := re.search(rf"^{COMPILED} ({re.escape(TRUSTED)}/__pycache__/[\w.-]+\.pyc)$", listed.output, re.M)):
                with contextlib.suppress(FileNotFoundError):
                    bytecode[compiled[1]] = await sandbox.read_file(compiled[1])
            self._images[key] = _Image(ImageFiles.parse(await sandbox.read_file(OUTSIDE)), bytecode)
        return self._images[key]


def changed_lines(diff: str) -> dict[str, list[list[int]]]:
    """The new side's changed lines of each file of a `git diff -U0`, as [first, last] spans; a
    removal counts the lines on both sides of where it was. A file git names quoted (an unusual
    name) is left out: the plugin counts a touched file it does not find as changed throughout."""
    spans: dict[str, list[list[int]]] = {}
    path = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            path = name[2:] if name.startswith("b/") else None
            if path is not None:
                spans.setdefault(path, [])
        elif path is not None and (hunk := re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)):
            first, count = int(hunk[1]), int(hunk[2] or 1)
            spans[path].append([first, first + count - 1] if count else [first, first + 1])
    return spans


def _config_files(task: Task) -> list[str]:
    """The repo's files pytest might take its configuration from, for the hidden tests."""
    return pytest_config.candidates([split_id(test)[0] for test in [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]])


def _setup_script(workdir: str, plan: ControlPlan, outside: ImageFiles, removed: list[str]) -> str:
    """Root-only shell run before the tests: the files the patch made and the verdict leaves out
    (`removed`) gone, nothing the test user can read shows the test files as they were before
    the controls went in (`hiding`), and the code under test may read the repo but change
    nothing in it, tests included. Each removal is one `rm` for all its files: every process cost
    the container ~3 ms of CPU."""
    w = shlex.quote(workdir)
    lines = [
        "set -e", f"cd {w}", *([f"rm -f -- {' '.join(map(shlex.quote, removed))}"] if removed else []),
        *hide_originals(workdir, plan.files, PRIVATE, outside),
        *lock(f"{w} {TRUSTED}"), f"chmod 700 /root {PRIVATE}", f"chmod 600 {PRIVATE}/*",
    ]
    return "\n".join(lines) + "\n"
