"""Verify an agent's patch in a fresh container the agent never touched.

    fresh container at the start state (hidden tests present) ─► git lists the patch ─► policy
      ─► git apply (strict) of the sections the policy kept
      ─► hidden test_patch (SWE-bench) ─► controls copied into the hidden tests, repo read-only
      ─► trusted runner (root) ─► pytest as an unprivileged user ─► records ─► grade

An engine fault is infrastructure, never a verdict: the whole verification is redone in a
new container with backoff, and when it keeps failing `verify` raises `VerifyError`, so the
attempt keeps its trajectory and a resumed run verifies it again. Only a container that the
code under test brought down itself is held against the patch, and here that can only be by
memory (`SandboxCrashed.oom`): the tests run as uid 1000, which cannot end root's init, so a
death without an outside `kill` (a host OOM killer, a crashed shim) is the engine's.

A verifier made with `reuse=True` (a run's) verifies each distinct verification once: a patch
identical to one already verified for a task alike in everything a verification reads
(`verification_key`), or being verified, gets a copy of that verdict flagged `REUSED`. Only
verdicts are kept: a verification that fails on infrastructure or is cancelled is done afresh
the next time it is asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from factory.errors import EngineError, SandboxCrashed, SandboxError, VerifyError
from factory.protocols import Sandbox, Verifier
from factory.records import Check, FlagKind, Reason, StartState, Task, Verdict, VerdictFlag
from factory.sandbox.backend import DIFF_LIMIT, Preparation, sandbox_backend
from factory.sandbox.config import SandboxConfig
from factory.sandbox.printed import print_listed, printed_files
from factory.sandbox.pull import ImageUnavailable, Puller
from factory.verify import gitread, sections
from factory.verify.ahead import Ahead
from factory.verify.config import VerifierConfig
from factory.verify.final_state import FinalStateVerifier
from factory.verify.flags import static_flags
from factory.verify.frameworks import FRAMEWORKS, TestFramework, Trial
from factory.verify.grading import grade
from factory.verify.languages import PutBack, Refusal
from factory.verify.policy import (
    FALLBACK_IMPORTABLE,
    Decision,
    RepoFacts,
    apply_policy,
    command_files,
    mode_refusal,
    module_dirs,
)

__all__ = ["DockerVerifier", "grade"]

TEST_PATCH = "/tmp/factory-tests.patch"
AGENT_PATCH_FAILED, TEST_PATCH_FAILED, AGENT_PATCH_MISPLACED = 3, 4, 5
"""Exit codes of the apply script (`_apply`)."""
APPLY_ERRORS = "/tmp/factory-apply.err"
JUDGED = f"{gitread.OUT}/judged"
"""The kept manifests the language's rules judge (`Decision.judged_after`), NUL-separated: read before
and after the patch is applied."""
log = logging.getLogger(__name__)


@dataclass
class Applied:
    """What the apply exec left for the framework: its `readback`'s output, the manifests whose
    judged parts the tests see at their start state (None: remove), and the flags of what was put back."""

    printed: str
    restore: dict[str, bytes | None] = field(default_factory=dict)
    flags: list[VerdictFlag] = field(default_factory=list)


REUSED = VerdictFlag(kind=FlagKind.reused)
"""Flag of a verdict copied from an identical verification in this process (`DockerVerifier(reuse=True)`)."""
NOT_READ = {"instance_id", "repo", "source", "alt_fixes"}
"""Task fields no verification reads: its names, and the other fixes only validation checks."""


def verification_key(task: Task, patch: str) -> str:
    """A digest of what a verification reads: the patch and the task but for `NOT_READ`. Two
    tasks alike in all of that are one verification, whatever their ids; a field added to Task
    is in the key unless named in `NOT_READ` (it can cost a reuse, never give a wrong one)."""
    inputs = {"task": task.model_dump(mode="json", exclude=NOT_READ), "patch": patch}
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


@dataclass
class _Shared:
    """A verification under way, and how many calls wait for it."""

    verdict: asyncio.Future[Verdict]
    waiting: int = 0


# verdicts made before any test ran, by the check their reason names
DECIDED_BEFORE_TESTS = {Reason.patch_rejected: Check.policy, Reason.patch_failed: Check.apply}


class DockerVerifier(Verifier):
    def __init__(self, config: VerifierConfig | None = None, sandbox: SandboxConfig | None = None, run_id: str = "verify",
                 puller: Puller | None = None, reuse: bool = False, share: bool = False):
        self.config = config or VerifierConfig()
        # root: nothing in a verification runs as the agent (the tests run as TEST_UID), so no agent
        # user is made and the repo is not handed over to one
        self.sandbox_config = (sandbox or SandboxConfig()).model_copy(update={"network": "none", "user": "root"})
        self.run_id = run_id
        self.backend = sandbox_backend(self.sandbox_config.backend)
        self.puller = puller or Puller.of(self.sandbox_config)  # a task's image may have to come from its registry
        self._interpreters: dict[tuple[str, str | None], gitread.Interpreter] = {}
        """What each image's test interpreter imports (image, test_cmd): asked once, in its first verification."""
        self._frameworks: dict[str, TestFramework] = {}
        """The test frameworks of the tasks verified so far, by kind (`_framework`)."""
        self._gold_seconds: dict[str, asyncio.Future] = {}
        """Verification time of each never-validated task's gold fix, measured when a run of it was slow."""
        self.reuse = reuse
        """Give an identical verification the verdict of the first (a run); off where repeats must
        run again (validation's `repeat`, the benches' rounds)."""
        self._verdicts: dict[str, Verdict] = {}
        """With `reuse`, every verdict given, by `verification_key`: a few kB each, kept for the process's life."""
        self._in_flight: dict[str, _Shared] = {}
        """With `reuse`, the verifications under way, by `verification_key`."""
        self.share = share
        """Start each task's verification containers from one making of its start state
        (`Preparation.share`): for a caller whose run ends in `remove_left`."""
        self.ahead = Ahead(self._started, self.config.ahead)
        self.final_state = FinalStateVerifier(self.backend, run_id=run_id, memory=self.config.memory,
                                              threshold=self.config.reward_threshold)

    async def verify(self, task: Task, patch: str, state: str | None = None) -> Verdict:
        """The verdict on `patch`, or for a terminal task on its frozen final `state` (an image,
        removed once it has its verdict: `factory.verify.final_state`). With `reuse`, a verification identical to one done or under way
        here gets a copy of its verdict flagged `REUSED`, its `seconds` this call's own wait (next
        to nothing when the verdict was at hand). Calls waiting for a verification share its error too."""
        if task.terminal is not None:
            return await self._judge_state(task, state)
        if not self.reuse:
            return await self._verify(task, patch)
        started, key = time.monotonic(), verification_key(task, patch)
        if key in self._verdicts:
            self.unexpect(task)
            return _reused(self._verdicts[key], started)
        if key in self._in_flight:
            self.unexpect(task)
            return _reused(await self._wait(key, self._in_flight[key]), started)
        shared = self._in_flight[key] = _Shared(asyncio.ensure_future(self._kept(key, task, patch)))
        return (await self._wait(key, shared)).model_copy(deep=True)  # the kept verdict is never handed out

    async def _judge_state(self, task: Task, state: str | None) -> Verdict:
        """A terminal task's verdict; an engine fault is infrastructure, and the state stays for a resume."""
        self.unexpect(task)  # nothing of a patch's verification is started ahead for it
        try:
            verdict = await self.final_state.verify(task, state)
        except (SandboxError, EngineError) as exc:
            raise VerifyError(f"verification of {task.instance_id}'s final state: {exc}") from exc
        if state is not None:
            await self.backend.remove_state(state)
        return verdict

    async def _kept(self, key: str, task: Task, patch: str) -> Verdict:
        """`_verify`, its verdict kept for the identical verifications to come; an error is not."""
        try:
            self._verdicts[key] = await self._verify(task, patch)
        finally:
            self._ended(key, asyncio.current_task())
        return self._verdicts[key]

    async def _wait(self, key: str, shared: _Shared) -> Verdict:
        """The shared verdict; one caller cancelled leaves the verification to the others, the last cancels it."""
        shared.waiting += 1
        try:
            return await asyncio.shield(shared.verdict)
        finally:
            shared.waiting -= 1
            if not shared.waiting and not shared.verdict.done():
                shared.verdict.cancel()
                self._ended(key, shared.verdict)  # now: the next call must not wait for its cleanup

    def _ended(self, key: str, verification: asyncio.Future | None) -> None:
        """`verification` of `key` is no longer under way (a newer one may be, and stays)."""
        if key in self._in_flight and self._in_flight[key].verdict is verification:
            del self._in_flight[key]

    async def _verify(self, task: Task, patch: str) -> Verdict:
        started = time.monotonic()
        flags = static_flags(patch)
        refused = mode_refusal(patch)
        if refused:
            return Verdict(resolved=False, reason=Reason.patch_rejected, detail=refused, flags=[VerdictFlag(kind=FlagKind.refused, detail=refused), *flags],
                           decided_by=Check.policy)
        try:
            verdict = await self._retrying(task, patch, flags)
        except SandboxCrashed as exc:
            if not _by_the_patch(exc):
                raise
            verdict = Verdict(resolved=False, reason=Reason.no_report, flags=flags, decided_by=Check.tests,
                              detail=f"the code under test brought the container down: {exc}")
        verdict.seconds = time.monotonic() - started
        return verdict.model_copy(update={"decided_by": verdict.decided_by or DECIDED_BEFORE_TESTS.get(verdict.reason)})

    async def _retrying(self, task: Task, patch: str, flags: list[VerdictFlag]) -> Verdict:
        """`_run`, redone from a fresh container while the engine fails it; then `VerifyError`."""
        try:
            await self.puller.ensure(task.image)
        except ImageUnavailable as exc:  # infrastructure: the attempt keeps its trajectory, a resume verifies it
            raise VerifyError(f"verification of {task.instance_id}: {exc}") from exc
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

    async def _run(self, task: Task, patch: str, flags: list[VerdictFlag]) -> Verdict:
        sandbox, listing = await self._at_start(task, patch)
        try:
            judged = await self._judge(sandbox, task, listing, flags)
            if isinstance(judged, Verdict):
                return judged
            touched = [p for c in judged.kept for p in c.paths]
            applied = await self._apply(sandbox, task, patch, listing, judged, touched)
            if isinstance(applied, Verdict):
                return applied.model_copy(update={"flags": [*applied.flags, *judged.flags, *flags]})
            trial = Trial(sandbox, task, touched, applied.printed, applied.restore, [*judged.flags, *applied.flags, *flags],
                          self.config.timeout_for(task.test_seconds),  # a stall costs about a minute, not a quarter hour
                          lambda running: self._within_fitted_limit(task, running))
            return await self._framework(task).run(trial)
        finally:
            await sandbox.close()

    def _framework(self, task: Task) -> TestFramework:
        """This verifier's instance of the task's test framework (it may keep what it learns of an image)."""
        kind = task.tests.framework
        if kind not in self._frameworks:
            self._frameworks[kind] = FRAMEWORKS.get(kind)()
        return self._frameworks[kind]

    async def _at_start(self, task: Task, patch: str) -> tuple[Sandbox, gitread.Listing]:
        """A container at the start state, and git's listing of the patch in it: the one started
        ahead for it (`Ahead`) while that still answers, else a new one."""
        ahead = await self.ahead.take(task)
        if ahead is not None:
            try:
                return ahead, await self._listing(ahead, patch)
            except SandboxError as exc:  # removed or stopped while it waited: not this verification's fault
                log.info("the container started ahead for %s is unusable (%s); starting a new one", task.instance_id, exc)
                await ahead.close()
        sandbox = await self._started(task)
        try:
            return sandbox, await self._listing(sandbox, patch)
        except BaseException:
            await sandbox.close()
            raise

    async def _started(self, task: Task) -> Sandbox:
        """A fresh container at the task's start state with the hidden tests in place (nothing is
        hidden at verification) and its test patch uploaded: where every verification of the task
        begins, before its patch (`Ahead` starts them while the attempt samples)."""
        start = StartState(bug_patch=task.start.bug_patch, base_commit=task.start.base_commit)
        return await self.backend.create(
            task.image, self.sandbox_config, workdir=task.workdir, run_id=self.run_id,
            attempt_id=f"verify-{task.instance_id}"[:60], memory=self.config.memory, wait=False,
            prepare=Preparation(start, files={TEST_PATCH: task.test_patch} if task.test_patch else None, share=self.share),
        )

    async def _listing(self, sandbox: Sandbox, patch: str) -> gitread.Listing:
        """git's listing of the patch against the start state: one upload, one exec."""
        if not patch.strip():
            return gitread.Listing()
        await sandbox.write_files({gitread.PATCH: patch}, owner="root")
        zero = sections.has_zero_context_hunk(patch)
        result = await sandbox.exec(gitread.printed_listing_script(unprefixed=gitread.may_lack_prefixes(patch), zero_context=zero),
                                    timeout=600, user="root", output_limit=DIFF_LIMIT)
        if result.timed_out:
            raise SandboxError(f"listing the agent patch timed out: {result.output[-2000:]}")
        try:
            if result.exit_code != 0 or result.truncated_bytes:
                raise ValueError(result.output[-2000:])
            listing = gitread.read_printed_listing(result.output)
        except (ValueError, IndexError) as exc:  # the script and the start state are the task's: the patch did it
            return gitread.Listing(error=f"could not list the patch: {exc}")
        listing.zero_context = zero
        return listing

    def expect(self, task: Task) -> None:
        """An attempt of `task` began sampling: its verification container may start now (`Ahead`)."""
        self.ahead.expect(task)

    def unexpect(self, task: Task) -> None:
        """An attempt of `task` ended with nothing to verify."""
        self.ahead.unexpect(task)

    async def close(self) -> None:
        """Remove the containers started ahead and not used."""
        await self.ahead.close()

    async def _judge(self, sandbox: Sandbox, task: Task, listing: gitread.Listing, flags: list[VerdictFlag]) -> Decision | Verdict:
        """The policy's judgement of what git reads in the patch; a Verdict when git cannot read it or it is refused."""
        if listing.error:
            return Verdict(resolved=False, reason=Reason.patch_failed, flags=flags,
                           detail=f"git cannot read the agent patch: {listing.error}")
        decision = apply_policy(listing.changes, await self._facts(sandbox, task, listing))
        if decision.rejected:
            return Verdict(resolved=False, reason=Reason.patch_rejected, detail=decision.rejected,
                           flags=[*decision.flags, *flags])
        return decision

    async def _apply(self, sandbox: Sandbox, task: Task, patch: str, listing: gitread.Listing, decision: Decision,
                     touched: list[str]) -> Verdict | Applied:
        """In one exec: the agent patch applied as judged (the very bytes git listed, the sections the
        policy left out left out by git, named in files), the manifests its language's rules judge read
        before and after, the hidden tests applied, and what the test framework reads back to plan its
        run. Those, or a Verdict."""
        judged = decision.judged_after
        files = gitread.apply_files(patch, listing, decision.excluded)
        if judged:  # named in a file: a patch may hold thousands, and a command line has a limit
            files[JUDGED] = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in judged)
        if files:
            await sandbox.write_files(files, owner="root")
        script = [print_listed(JUDGED, "before") if judged else ":"]
        if decision.kept:
            script.append(gitread.apply_script(gitread.PATCH, APPLY_ERRORS, AGENT_PATCH_FAILED, files=files, strip=listing.strip,
                                               zero_context=listing.zero_context, misplaced=AGENT_PATCH_MISPLACED))
        script.append(print_listed(JUDGED, "after") if judged else ":")
        if task.test_patch:
            script.append(gitread.apply_script(TEST_PATCH, APPLY_ERRORS, TEST_PATCH_FAILED))
        script.append(self._framework(task).readback(task, touched))
        result = await sandbox.exec("\n".join(script), timeout=300, user="root", output_limit=DIFF_LIMIT)
        if result.exit_code == AGENT_PATCH_FAILED:
            return Verdict(resolved=False, reason=Reason.patch_failed, detail="agent patch does not apply")
        if result.exit_code == AGENT_PATCH_MISPLACED:
            return Verdict(resolved=False, reason=Reason.patch_failed,
                           detail=f"a hunk without context lines does not apply at the line it names: {result.output[-500:]}")
        if result.exit_code == TEST_PATCH_FAILED:
            raise VerifyError(f"task {task.instance_id}: its hidden tests do not apply to its start state")
        if result.timed_out:
            raise SandboxError(f"applying and reading the patches timed out: {result.output[-1000:]}")
        if result.exit_code != 0 or result.truncated_bytes:  # the script and the start state are the task's: the patch did it
            return Verdict(resolved=False, reason=Reason.patch_failed,
                           detail=f"could not apply and read the patch: {result.output[-1000:]}")
        before, after = (printed_files(result.output, when, judged) for when in ("before", "after"))
        restored, flags = {}, []
        for path in judged:
            judgement = decision.rules.judge(path, before[path], after[path], decision.facts)
            if isinstance(judgement, Refusal):
                return Verdict(resolved=False, reason=Reason.patch_rejected, detail=judgement.why,
                               flags=[VerdictFlag(kind=FlagKind.refused, detail=judgement.why)])
            if isinstance(judgement, PutBack):  # the tests run under the task's configuration
                restored[path] = judgement.content
                flags.append(VerdictFlag(kind=FlagKind.dropped_packaging_configuration, detail=judgement.why))
        return Applied(result.output, restored, flags)

    async def _facts(self, sandbox: Sandbox, task: Task, listing: gitread.Listing) -> RepoFacts:
        key = (task.image, task.test_cmd)
        interpreter = self._interpreters.get(key)
        # what the interpreter imports matters to Python code alone; another language's image may have none
        if interpreter is None and task.language == "python":
            interpreter = await gitread.probe_interpreter(sandbox, task.test_cmd)
            if interpreter is None:
                log.warning("%s: could not ask the test interpreter what it imports; judging shadows by the stdlib",
                            task.image)
            else:
                self._interpreters[key] = interpreter
        interpreter = interpreter or gitread.Interpreter(FALLBACK_IMPORTABLE, ())
        tests = [nodeid.split("::")[0] for nodeid in (*task.FAIL_TO_PASS, *task.PASS_TO_PASS)]
        dirs = module_dirs(listing.files, interpreter.sys_path, task.workdir, tests)
        return RepoFacts(listing.files, listing.links, interpreter.importable, dirs, language=task.language,
                         command=task.tests.command, command_files=command_files(task.tests.command, listing.files))

    async def _within_fitted_limit(self, task: Task, running: asyncio.Future) -> bool:
        """Wait for the test run; False if it was cut. A task never validated has no measured time
        to fit its limit to, so once its run outlasts the floor its gold fix is verified beside it
        (once per task) and the run is held to the limit that time gives: a stall then costs
        about a minute, not the flat limit."""
        started = time.monotonic()
        if task.test_seconds or not task.gold_patch:
            await running
            return True
        done, _ = await asyncio.wait({running}, timeout=self.config.timeout_floor)
        if done:
            return True
        gold = self._gold_seconds.get(task.instance_id)
        if gold is None:
            gold = self._gold_seconds[task.instance_id] = asyncio.ensure_future(self._time_gold(task))
        seconds = await asyncio.shield(gold)
        if seconds is None:
            await running
            return True
        left = self.config.timeout_for(seconds) - (time.monotonic() - started)
        try:
            await asyncio.wait_for(asyncio.shield(running), max(left, 0))
        except TimeoutError:
            running.cancel()  # the container goes with the sandbox, and the command with it
            return False
        return True

    async def _time_gold(self, task: Task) -> float | None:
        """Seconds the gold fix takes to verify (as `factory tasks validate` measures); None when it
        does not resolve, so the task keeps the flat limit."""
        with contextlib.suppress(VerifyError):
            # never a reused verdict: its seconds would be a wait, not the gold fix's time
            verdict = await self._verify(task.model_copy(update={"test_seconds": self.config.timeout}), task.gold_patch)
            return verdict.seconds if verdict.resolved else None
        return None


def _reused(verdict: Verdict, started: float) -> Verdict:
    return verdict.model_copy(update={"flags": [*verdict.flags, REUSED], "seconds": time.monotonic() - started}, deep=True)


def _infrastructure(exc: BaseException) -> bool:
    return isinstance(exc, SandboxError) and not (isinstance(exc, SandboxCrashed) and _by_the_patch(exc))


def _by_the_patch(crash: SandboxCrashed) -> bool:
    return crash.by_agent and crash.oom
