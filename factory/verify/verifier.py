"""Verify an agent's patch in a fresh container the agent never touched.

    fresh container at the start state (hidden tests present) ─► git lists the patch ─► policy
      ─► git apply (strict) of the sections the policy kept
      ─► hidden test_patch (SWE-bench) ─► controls copied into the hidden tests, repo read-only
      ─► trusted runner (root) ─► pytest as an unprivileged user ─► records ─► grade

An engine fault is infrastructure, never a verdict: the whole verification is redone in a
new container with backoff, and when it keeps failing `verify` raises `VerifyError`, so the
attempt keeps its trajectory and a resumed run verifies it again. Only a container that the
code under test brought down itself (`SandboxCrashed.by_agent`) is held against the patch.
"""

from __future__ import annotations

import json
import logging
import random
import shlex
import time
from importlib import resources
from pathlib import PurePosixPath

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from factory.config import SandboxConfig, VerifierConfig
from factory.errors import SandboxCrashed, SandboxError, VerifyError
from factory.records import Check, Reason, StartState, Task, Verdict
from factory.sandbox.docker import DockerSandbox
from factory.verify import gitread
from factory.verify.controls import ControlPlan, hidden_files, plan_controls
from factory.verify.flags import static_flags
from factory.verify.grading import TestRun, grade
from factory.verify.packaging import packaging_refusal
from factory.verify.policy import (
    FALLBACK_IMPORTABLE,
    Decision,
    RepoFacts,
    apply_policy,
    mode_refusal,
    module_dirs,
)

__all__ = ["DockerVerifier", "grade"]

TRUSTED = "/opt/factory-verify"  # the runner and the plugin: root's, readable by all
PRIVATE = "/root/factory-verify"  # the job, the setup script, the report: root only
TEST_UID = 1000
TRUSTED_INI = "[pytest]\n"
log = logging.getLogger(__name__)


# verdicts made before any test ran, by the check their reason names
DECIDED_BEFORE_TESTS = {Reason.patch_rejected: Check.policy, Reason.patch_failed: Check.apply}


class DockerVerifier:
    def __init__(self, config: VerifierConfig | None = None, sandbox: SandboxConfig | None = None, run_id: str = "verify"):
        self.config = config or VerifierConfig()
        self.sandbox_config = (sandbox or SandboxConfig()).model_copy(update={"network": "none"})
        self.run_id = run_id
        self._interpreters: dict[tuple[str, str | None], gitread.Interpreter] = {}
        """What each image's test interpreter imports (image, test_cmd): asked once, in its first verification."""

    async def verify(self, task: Task, patch: str) -> Verdict:
        started = time.monotonic()
        flags = static_flags(patch)
        refused = mode_refusal(patch)
        if refused:
            return Verdict(resolved=False, reason=Reason.patch_rejected, detail=refused, flags=[f"refused: {refused}", *flags],
                           decided_by=Check.policy)
        try:
            verdict = await self._retrying(task, patch, flags)
        except SandboxCrashed as exc:
            if not exc.by_agent:
                raise
            verdict = Verdict(resolved=False, reason=Reason.no_report, flags=flags, decided_by=Check.tests,
                              detail=f"the code under test brought the container down: {exc}")
        verdict.seconds = time.monotonic() - started
        return verdict.model_copy(update={"decided_by": verdict.decided_by or DECIDED_BEFORE_TESTS.get(verdict.reason)})

    async def _retrying(self, task: Task, patch: str, flags: list[str]) -> Verdict:
        """`_run`, redone from a fresh container while the engine fails it; then `VerifyError`."""
        tries = AsyncRetrying(
            stop=stop_after_attempt(self.config.infra_retries + 1),
            wait=wait_exponential_jitter(multiplier=self.config.retry_wait, max=30 * self.config.retry_wait),
            retry=retry_if_exception(_infrastructure),
            reraise=True,
        )
        try:
            async for attempt in tries:
                with attempt:
                    return await self._run(task, patch, flags)
        except SandboxError as exc:
            if not _infrastructure(exc):
                raise
            raise VerifyError(f"verification of {task.instance_id} failed on infrastructure "
                              f"{self.config.infra_retries + 1} times; last: {exc}") from exc
        raise AssertionError("unreachable")

    async def _run(self, task: Task, patch: str, flags: list[str]) -> Verdict:
        sandbox = await DockerSandbox.create(
            task.image, self.sandbox_config, workdir=task.workdir, run_id=self.run_id,
            attempt_id=f"verify-{task.instance_id}"[:60], memory=self.config.memory,
        )
        try:
            # the start state with the hidden tests in place: nothing is hidden at verification
            await sandbox.prepare(StartState(bug_patch=task.start.bug_patch, base_commit=task.start.base_commit))
            judged = await self._apply_agent_patch(sandbox, task, patch, flags)
            if isinstance(judged, Verdict):
                return judged
            flags = [*judged.flags, *flags]
            if task.test_patch and not await self._apply(sandbox, task.test_patch, "hidden tests"):
                raise VerifyError(f"task {task.instance_id}: its hidden tests do not apply to its start state")
            report = await self._run_tests(sandbox, task, [p for c in judged.kept for p in c.paths])
        finally:
            await sandbox.close()
        return grade(task, report, flags)

    async def _apply_agent_patch(self, sandbox: DockerSandbox, task: Task, patch: str, flags: list[str]) -> Decision | Verdict:
        """The policy's judgement of what git reads in the patch, applied as judged (the sections it
        leaves out left out by git); a Verdict when git cannot read it, it is refused or it does not apply."""
        listing = await gitread.list_patch(sandbox, patch) if patch.strip() else gitread.Listing()
        if listing.error:
            return Verdict(resolved=False, reason=Reason.patch_failed, flags=flags,
                           detail=f"git cannot read the agent patch: {listing.error}")
        decision = apply_policy(listing.changes, await self._facts(sandbox, task, listing))
        flags = [*decision.flags, *flags]
        if decision.rejected:
            return Verdict(resolved=False, reason=Reason.patch_rejected, detail=decision.rejected, flags=flags)
        packaging = {path: await gitread.read_optional(sandbox, path) for path in decision.packaging_files}
        if decision.kept and not await self._apply(sandbox, patch, "agent", decision.excluded):
            return Verdict(resolved=False, reason=Reason.patch_failed, detail="agent patch does not apply", flags=flags)
        for path, before in packaging.items():
            refused = packaging_refusal(path, before, await gitread.read_optional(sandbox, path))
            if refused:
                return Verdict(resolved=False, reason=Reason.patch_rejected, detail=refused,
                               flags=[f"refused: {refused}", *flags])
        return decision

    async def _facts(self, sandbox: DockerSandbox, task: Task, listing: gitread.Listing) -> RepoFacts:
        key = (task.image, task.test_cmd)
        interpreter = self._interpreters.get(key) or await gitread.probe_interpreter(sandbox, task.test_cmd)
        if interpreter is None:
            log.warning("%s: could not ask the test interpreter what it imports; judging shadows by the stdlib", task.image)
            interpreter = gitread.Interpreter(FALLBACK_IMPORTABLE, ())
        else:
            self._interpreters[key] = interpreter
        tests = [nodeid.split("::")[0] for nodeid in (*task.FAIL_TO_PASS, *task.PASS_TO_PASS)]
        dirs = module_dirs(listing.files, interpreter.sys_path, task.workdir, tests)
        return RepoFacts(listing.files, listing.links, interpreter.importable, dirs)

    async def _apply(self, sandbox: DockerSandbox, diff: str, name: str, exclude: list[str] | None = None) -> bool:
        path = f"/tmp/factory-{name.replace(' ', '-')}.patch"
        await sandbox.write_file(path, diff, owner="root")
        result = await sandbox.exec(gitread.apply_command(path, exclude or []), timeout=120, user="root")
        return result.exit_code == 0

    async def _run_tests(self, sandbox: DockerSandbox, task: Task, touched: list[str]) -> TestRun:
        plan = await self._plant_controls(sandbox, task, touched)
        package = resources.files("factory.verify") / "container"
        for name in ("runner.py", "factory_pytest_plugin.py"):
            await sandbox.write_file(f"{TRUSTED}/{name}", package.joinpath(name).read_text(), owner="root")
        await sandbox.write_file(f"{TRUSTED}/pytest.ini", TRUSTED_INI, owner="root")
        limit = self.config.timeout_for(task.test_seconds)  # a stall costs about a minute, not a quarter hour
        job = {
            "workdir": task.workdir, "uid": TEST_UID, "timeout": limit, "ids": plan.ids,
            "touched": [p for p in touched if p.endswith(".py")], "ini": f"{TRUSTED}/pytest.ini",
            "report": f"{PRIVATE}/report.json", "log": f"{PRIVATE}/pytest.log",
        }
        await sandbox.write_file(f"{PRIVATE}/job.json", json.dumps(job), owner="root")
        await sandbox.write_file(f"{PRIVATE}/setup.sh", _setup_script(task.workdir, plan), owner="root")
        prefix = f"{task.test_cmd}; " if task.test_cmd else ""
        # this command line stays readable in /proc while the tests run: it names no test
        command = f"sh {PRIVATE}/setup.sh && {{ {prefix}exec python3 -I -S {TRUSTED}/runner.py {PRIVATE}/job.json; }}"
        result = await sandbox.exec(command, timeout=limit + 120, user="root")
        try:
            report = json.loads(await sandbox.read_file(job["report"]))
        except (FileNotFoundError, json.JSONDecodeError):
            return TestRun(timed_out=result.timed_out, runner_failed=result.output[-2000:],
                           controls=plan.controls, weak=plan.weak)
        return TestRun.from_report(report, plan)

    async def _plant_controls(self, sandbox: DockerSandbox, task: Task, touched: list[str]) -> ControlPlan:
        """Copy hidden tests into controls, in the files as they are now (the agent's patch and
        the test patch applied); the originals go to the private folder for `_setup_script`."""
        sources: dict[str, str] = {}
        for path in hidden_files(task, touched):
            try:
                sources[path] = (await sandbox.read_file(path)).decode()
            except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
                continue
        plan = plan_controls(task, sources, random.SystemRandom())
        for i, (path, text) in enumerate(plan.files.items()):
            if path in sources:
                await sandbox.write_file(f"{PRIVATE}/original-{i}", sources[path], owner="root")
            await sandbox.write_file(path, text, owner="root")
        return plan


def _setup_script(workdir: str, plan: ControlPlan) -> str:
    """Root-only shell run before the tests. Nothing the test user can read may show the test
    files as they were before the controls went in: patches left in /tmp, pytest's cache of node
    ids, bytecode, copies of the files elsewhere (build folders, site-packages), and git: every
    object store on the disk (the repo's `.git`, the factory's own) becomes root-only."""
    w = shlex.quote(workdir)
    names = " -o ".join(f"-name {shlex.quote(PurePosixPath(p).name)}" for p in plan.files) or "-false"
    lines = [
        "set -e", f"cd {w}",
        "find /tmp -maxdepth 1 -name 'factory*' -exec rm -rf {} +",
        "find . -name .pytest_cache -prune -exec rm -rf {} +",
        *(f"rm -f {shlex.quote(str(PurePosixPath(p).parent / '__pycache__'))}/{shlex.quote(PurePosixPath(p).stem)}.*.pyc "
          f"{shlex.quote(str(PurePosixPath(p).with_suffix('.pyc')))}" for p in plan.files),
        f"find / -xdev \\( -type d -name objects -prune -o -type f \\( {names} \\) \\) -print 2>/dev/null "
        f"> {PRIVATE}/found || true",
        "while IFS= read -r f; do",
        '  case "$f" in',
        '    */objects) if [ -f "$f/../HEAD" ]; then chmod -R go-rwx "$f/.."; fi ;;',
        f'    *) for o in {PRIVATE}/original-*; do if cmp -s "$f" "$o"; then chmod go-rwx "$f"; fi; done ;;',
        "  esac",
        f"done < {PRIVATE}/found",
        # the code under test may read the repo but change nothing in it, tests included
        f"chown -R root:root {w} {TRUSTED}", f"chmod -R go-w {w} {TRUSTED}",
        f"chmod 700 /root {PRIVATE}", f"chmod 600 {PRIVATE}/*",
    ]
    return "\n".join(lines) + "\n"


def _infrastructure(exc: BaseException) -> bool:
    return isinstance(exc, SandboxError) and not (isinstance(exc, SandboxCrashed) and exc.by_agent)
