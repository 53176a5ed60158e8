"""Verify an agent's patch in a fresh container the agent never touched.

    policy ─► fresh container at the start state (hidden tests present) ─► git apply (strict)
      ─► hidden test_patch (SWE-bench) ─► repo made read-only, a control test planted
      ─► trusted runner (root) ─► pytest as an unprivileged user ─► signed report ─► grade

An engine fault is infrastructure, never a verdict: the whole verification is redone in a
new container with backoff, and when it keeps failing `verify` raises `VerifyError`, so the
attempt keeps its trajectory and a resumed run verifies it again. Only a container that the
code under test brought down itself (`SandboxCrashed.by_agent`) is held against the patch.
"""

from __future__ import annotations

import json
import secrets
import shlex
import time
from importlib import resources
from pathlib import PurePosixPath

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from factory.config import SandboxConfig, VerifierConfig
from factory.errors import SandboxCrashed, SandboxError, VerifyError
from factory.records import Reason, StartState, Task, TestStatus, Verdict
from factory.sandbox.docker import GIT, DockerSandbox
from factory.tasks.patches import touched_files
from factory.verify.flags import static_flags
from factory.verify.policy import apply_policy

TRUSTED = "/opt/factory-verify"
TEST_UID = 1000
TRUSTED_INI = "[pytest]\n"


class DockerVerifier:
    def __init__(self, config: VerifierConfig | None = None, sandbox: SandboxConfig | None = None, run_id: str = "verify"):
        self.config = config or VerifierConfig()
        self.sandbox_config = (sandbox or SandboxConfig()).model_copy(update={"network": "none"})
        self.run_id = run_id

    async def verify(self, task: Task, patch: str) -> Verdict:
        started = time.monotonic()
        policy = apply_policy(patch)
        flags = policy.flags + static_flags(patch)
        if policy.rejected:
            return Verdict(resolved=False, reason=Reason.patch_rejected, detail=policy.rejected, flags=flags)
        try:
            verdict = await self._retrying(task, policy.patch, flags)
        except SandboxCrashed as exc:
            if not exc.by_agent:
                raise
            verdict = Verdict(resolved=False, reason=Reason.no_report, flags=flags,
                              detail=f"the code under test brought the container down: {exc}")
        verdict.seconds = time.monotonic() - started
        return verdict

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
            for name, diff in (("agent", patch), ("hidden tests", task.test_patch)):
                if diff and not await self._apply(sandbox, diff, name):
                    if name != "agent":
                        raise VerifyError(f"task {task.instance_id}: its hidden tests do not apply to its start state")
                    return Verdict(resolved=False, reason=Reason.patch_failed, detail="agent patch does not apply", flags=flags)
            report = await self._run_tests(sandbox, task, touched_files(patch))
        finally:
            await sandbox.close()
        return grade(task, report, flags)

    async def _apply(self, sandbox: DockerSandbox, diff: str, name: str) -> bool:
        path = f"/tmp/factory-{name.replace(' ', '-')}.patch"
        await sandbox.write_file(path, diff, owner="root")
        result = await sandbox.exec(f"{GIT} apply --whitespace=nowarn {path}", timeout=120, user="root")
        return result.exit_code == 0

    async def _run_tests(self, sandbox: DockerSandbox, task: Task, touched: list[str]) -> dict:
        nonce = secrets.token_hex(8)
        control_dir = PurePosixPath(task.FAIL_TO_PASS[0].split("::")[0]).parent
        control_file = str(control_dir / f"test_{nonce[:6]}_{nonce[6:]}.py")
        control_id = f"{control_file}::test_{nonce}"
        await sandbox.write_file(control_file, f"def test_{nonce}():\n    assert False, 'control {nonce}'\n", owner="root")
        package = resources.files("factory.verify") / "container"
        for name in ("runner.py", "factory_pytest_plugin.py"):
            await sandbox.write_file(f"{TRUSTED}/{name}", package.joinpath(name).read_text(), owner="root")
        await sandbox.write_file(f"{TRUSTED}/pytest.ini", TRUSTED_INI, owner="root")
        job = {
            "workdir": task.workdir, "uid": TEST_UID, "timeout": self.config.timeout,
            "ids": [*task.FAIL_TO_PASS, *task.PASS_TO_PASS, control_id], "control": control_id,
            "touched": [p for p in touched if p.endswith(".py")], "ini": f"{TRUSTED}/pytest.ini",
            "report": "/root/factory-report.json", "log": "/root/factory-pytest.log",
        }
        await sandbox.write_file(f"{TRUSTED}/job.json", json.dumps(job), owner="root")
        # the code under test may read the repo but change nothing in it, tests included
        setup = f"chown -R root:root {shlex.quote(task.workdir)} {TRUSTED} && chmod -R go-w {shlex.quote(task.workdir)} {TRUSTED} && chmod 700 /root"
        prefix = f"{task.test_cmd}; " if task.test_cmd else ""
        command = f"{setup} && {{ {prefix}exec python3 -I {TRUSTED}/runner.py {TRUSTED}/job.json; }}"
        result = await sandbox.exec(command, timeout=self.config.timeout + 120, user="root")
        try:
            report = json.loads(await sandbox.read_file(job["report"]))
        except (FileNotFoundError, json.JSONDecodeError):
            return {"records": [], "forged": 0, "timed_out": result.timed_out, "runner_failed": result.output[-2000:]}
        report["control"], report["nonce"] = control_id, nonce
        return report


def _infrastructure(exc: BaseException) -> bool:
    return isinstance(exc, SandboxError) and not (isinstance(exc, SandboxCrashed) and exc.by_agent)


def _status(phases: dict[str, dict]) -> TestStatus:
    call = phases.get("call")
    if any(p["outcome"] == "failed" for w, p in phases.items() if w != "call"):
        return TestStatus.error
    if call is None:
        skipped = any(p["outcome"] == "skipped" for p in phases.values())
        return TestStatus.skipped if skipped else TestStatus.missing
    if call["xfail"]:
        return TestStatus.xfailed
    return TestStatus(call["outcome"]) if call["outcome"] in ("passed", "failed", "skipped") else TestStatus.error


def grade(task: Task, report: dict, flags: list[str]) -> Verdict:
    """Resolved only if every FAIL_TO_PASS and PASS_TO_PASS id passed and the control failed as planted."""
    phases: dict[str, dict[str, dict]] = {}
    done = None
    always_equal: set[str] = set()
    for record in report.get("records", []):
        if record["kind"] == "test":
            phases.setdefault(record["nodeid"], {})[record["when"]] = record
        elif record["kind"] in ("collected", "done"):
            always_equal.update(record.get("always_equal", []))
            done = record if record["kind"] == "done" else done
    tests = {nid: _status(phases.get(nid, {})) for nid in [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]}
    control = phases.get(report.get("control", ""), {}).get("call")

    def verdict(reason: Reason | None, detail: str = "") -> Verdict:
        return Verdict(resolved=reason is None, reason=reason, detail=detail, tests=tests, flags=flags)

    if report.get("forged"):
        return verdict(Reason.tampered, f"{report['forged']} report lines failed their signature")
    if always_equal:
        return verdict(Reason.tampered, "objects equal to anything: " + ", ".join(sorted(always_equal)))
    if report.get("timed_out"):
        return verdict(Reason.timeout, "the tests did not finish in time")
    if control is not None and control["outcome"] != "failed":
        return verdict(Reason.tampered, "the planted control test did not fail: the report was forged")
    if done is None or control is None:
        detail = report.get("runner_failed") or report.get("log_tail", "")[-1500:]
        return verdict(Reason.no_report, "the test run ended without a complete report: " + detail.strip()[-1500:])
    if report.get("nonce") and report["nonce"] not in control.get("longrepr", ""):
        return verdict(Reason.tampered, "the control test failed for a reason other than the planted one")
    failing = [nid for nid, status in tests.items() if status is not TestStatus.passed]
    if failing:
        return verdict(Reason.tests_failed, f"{len(failing)} of {len(tests)} tests not passed, e.g. {failing[0]}")
    return verdict(None)
