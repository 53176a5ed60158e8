"""The scheduler alone owns concurrency: attempts fanned out over tasks x teachers, under limits.

    units (task, teacher, index), breadth first ─► launch while eligible ─► sandbox from the pool
      ─► run_agent (teacher turns journaled) ─► release the slot ─► verify (concurrently)
      ─► attempt file (atomic) ─► warehouse ─► task state (early stop, give-up)

Early stop: a task stops launching once the runs the dataset keeps of it (`factory.keeper`: the
pipeline's own filter chain) plus the attempts in flight reach `filters.cap.per_task`.
Infrastructure failures (engine fault, sandbox removed, teacher outage after retries) are redone up to `infra_retries` times and recorded as
such; a verification that the engine keeps failing records the attempt with its trajectory
and `error_class = verify_error`. Resuming a run redoes what infrastructure left undone: it
verifies attempts that have a trajectory but no verdict, and samples again the attempts that
infrastructure ended (paid turns replay from the journal, so nothing is paid twice); it folds
the finished attempts into task state in the order they finished, as the run that wrote them
did. Budget: a unit starts only while the cost spent plus the ceilings of the attempts in
flight, its own included, stay within `budget.max_cost_usd` (`factory.budget`). Signals: a first
Ctrl-C stops launching and lets attempts in flight finish; a second cancels them (their
sandboxes are removed on the way out).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import signal
import time
import zlib
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from factory.agent.harness import pick
from factory.agent.loop import run_agent
from factory.budget import Budget
from factory.config import Pipeline
from factory.errors import SandboxError, StorageError, VerifyError
from factory.journal import JournalTeacher
from factory.keeper import Keeper
from factory.protocols import Pool, Teacher, Verifier
from factory.records import INFRA_EXITS, Attempt, AttemptKey, Exit, PossiblyBilled, Task, Trajectory
from factory.runs import RunStore

T = TypeVar("T")
VERIFY_ERROR = "verify_error"  # error_class of an attempt whose verification infrastructure failed


@dataclass(frozen=True)
class Unit:
    task: Task
    teacher: str
    index: int

    def key(self, run_id: str) -> AttemptKey:
        return AttemptKey(run_id=run_id, instance_id=self.task.instance_id, teacher=self.teacher, index=self.index)


@dataclass
class TaskState:
    inflight: int = 0
    streak: int = 0  # model failures in a row
    gave_up: bool = False


@dataclass
class RunResult:
    finished: int = 0
    resumed: int = 0
    launched: int = 0
    stopped: str = ""  # why launching stopped early: budget, interrupted, ...
    spent_usd: float = 0.0
    priced: int = 0  # attempts whose cost is known
    unknown_cost: int = 0
    possibly_billed: int = 0  # paid requests cut off in flight (kill, cancel, timeout), in no cost above
    possibly_billed_usd: float = 0.0  # the most those of known price can have cost
    possibly_billed_unpriced: int = 0
    kept: int = 0  # rows the dataset keeps (the pipeline's filters), over all tasks
    tasks: int = 0
    cap: int | None = None  # filters.cap.per_task, the runs a task keeps; None: no cap
    at_cap: int = 0  # tasks whose kept runs reached the cap
    not_needed: int = 0  # attempts never made: their task had enough (early stop)
    attempts: list[Attempt] = field(default_factory=list)


class Scheduler:
    def __init__(
        self,
        pipeline: Pipeline,
        tasks: list[Task],
        teachers: dict[str, Teacher],
        store: RunStore,
        *,
        pool: Pool,
        verifier: Verifier,
        warehouse=None,
        progress=None,
        journal: set[str] | None = None,
        keeper: Keeper | None = None,
    ):
        self.p = pipeline
        self.tasks = tasks
        self.teachers = teachers
        self.journal = journal or set()  # teacher labels whose turns are journaled (paid ones)
        self.store = store
        self.pool = pool
        self.verifier = verifier
        self.warehouse = warehouse
        self.progress = progress
        self.state = {t.instance_id: TaskState() for t in tasks}
        self.tasks_by_id = {t.instance_id: t for t in tasks}
        self.keeper = keeper or Keeper(pipeline.filters)
        self.result = RunResult(tasks=len(tasks), cap=self.keeper.wanted)
        self.slots = asyncio.Semaphore(pipeline.sampling.max_in_flight)
        self.verify_slots = asyncio.Semaphore(max(1, pipeline.sampling.max_in_flight // 2))
        self.changed = asyncio.Event()
        self.running: set[asyncio.Task] = set()
        self.stopping = False
        self.interrupts = 0
        self.budget = Budget(pipeline)
        self.write_error: StorageError | None = None  # the first run file that could not be written
        self.late: set[asyncio.Future] = set()  # work that passed an attempt's deadline, finishing unawaited

    # ------------------------------------------------------------------ plan

    def _units(self, pending: set[tuple[str, str, int]]) -> deque[Unit]:
        """Breadth first: every task's attempt 0, then every task's attempt 1, ...; except
        attempts finished already or `pending` (sampled, only their verdict is missing)."""
        done = {_unit_id(a.key) for a in self.result.attempts} | pending
        units = deque()
        for index in range(self.p.sampling.attempts_per_task):
            for task in self.tasks:
                for teacher in self.teachers:
                    if (task.instance_id, teacher, index) not in done:
                        units.append(Unit(task, teacher, index))
        return units

    def _absorb(self, attempt: Attempt) -> None:
        """Fold a finished attempt into its task's state."""
        state = self.state.get(attempt.key.instance_id)
        if state is None:
            return
        task = attempt.key.instance_id
        was_needed = self.keeper.needs(task)
        if self.keeper.add(attempt):
            state.streak = 0
        elif attempt.error_class is None:
            state.streak += 1
            limit = self.p.sampling.give_up_after_failures
            state.gave_up = state.gave_up or (limit is not None and state.streak >= limit and not self.keeper.kept(task))
        self.result.kept = self.keeper.total
        self.result.at_cap += was_needed and not self.keeper.needs(task)
        cost = attempt.trajectory.cost_usd if attempt.trajectory else 0.0
        if cost is None:
            self.result.unknown_cost += 1
        else:
            self.result.spent_usd += cost
            self.result.priced += 1
        for cut in attempt.trajectory.possibly_billed if attempt.trajectory else ():
            self.result.possibly_billed += 1
            if cut.max_cost_usd is None:
                self.result.possibly_billed_unpriced += 1
            else:
                self.result.possibly_billed_usd += cut.max_cost_usd

    def _eligible(self, queue: deque[Unit]) -> Unit | None:
        """Pop the first unit that may start now; drop units of finished tasks for good."""
        give_up = self.p.sampling.give_up_after_failures
        # the scan ends at the first eligible unit; only units of tasks with attempts in flight
        # come before it, so a launch costs O(in flight), not O(queue), on runs of 100k units
        i = 0
        while i < len(queue):
            unit = queue[i]
            task = unit.task.instance_id
            state = self.state[task]
            if not self.keeper.needs(task) or state.gave_up:
                self.result.not_needed += not state.gave_up
                del queue[i]
                continue
            # never bet more attempts than could still be needed, or than the failure allowance left
            needed = self.keeper.needs(task, state.inflight)
            allowed = give_up is None or bool(self.keeper.kept(task)) or state.streak + state.inflight < give_up
            if needed and allowed:
                del queue[i]
                return unit
            i += 1
        return None

    # ------------------------------------------------------------------ run

    async def run(self) -> RunResult:
        unverified: list[Attempt] = []
        # in the order they finished, so task state (the give-up streak) comes out as it did
        for attempt in sorted(self.store.attempts(), key=_finish_time):
            if self.warehouse is not None:  # re-sync: the files are the truth, rows are derived
                self.warehouse.resync([attempt])
            self.budget.pay(attempt)  # whatever became of it, what it cost is spent (a redo replaces it)
            if attempt.error_class == VERIFY_ERROR and attempt.key.instance_id in self.state:
                unverified.append(attempt)  # verified again below; its sampling is done and paid
            elif attempt.error_class is None:
                self.result.attempts.append(attempt)
                self.result.resumed += 1
                self._absorb(attempt)
            # any other error_class: infrastructure ended the sampling; `_units` queues it again
        queue = self._units(pending={_unit_id(a.key) for a in unverified})
        if self.progress:
            self.progress.start(total=len(queue) + len(unverified) + self.result.resumed, done=self.result.resumed,
                                before=self.result.attempts, kept=self.result.kept, spent=self.result.spent_usd)
        self._install_signals()
        try:
            for attempt in unverified:
                self.state[attempt.key.instance_id].inflight += 1  # it may yet be kept
                self._start(self._reverify(attempt))
                if self.progress:
                    self.progress.reverifying(attempt.key)
            await self._launch(queue)
            while self.running:
                await asyncio.wait(set(self.running), return_when=asyncio.FIRST_COMPLETED)
            while self.late:  # work that came late, and the release of what it made
                await asyncio.gather(*self.late, return_exceptions=True)
        finally:
            await self._cancel_all()
            self._remove_signals()
        if self.write_error is not None:
            raise self.write_error
        return self.result

    async def _launch(self, queue: deque[Unit]) -> None:
        while queue and not self.stopping:
            self.pool.prewarm(queue[0].task.image, queue[0].task.workdir)  # the next image, ahead of need
            await self.slots.acquire()
            # chosen only once a slot is free, so the decision sees every attempt finished so far
            unit = self._eligible(queue) if not self.stopping else None
            if unit is not None and not self.budget.allows(unit.teacher):
                queue.appendleft(unit)
                if not self.budget.sampling.total():  # no attempt in flight will settle below its ceiling
                    self.slots.release()
                    self._stop_for_budget(unit)
                    return
                unit = None  # wait until one does
            if unit is None:
                self.slots.release()
                if not self.running or self.stopping:
                    return
                self.changed.clear()
                await self.changed.wait()
                continue
            self.state[unit.task.instance_id].inflight += 1
            self.budget.started(unit.teacher)
            self.result.launched += 1
            self._start(self._attempt(unit))
            if self.progress:
                self.progress.launched(unit.key(self.store.run_id))

    def _stop_for_budget(self, unit: Unit) -> None:
        b = self.budget
        self.result.stopped = self.result.stopped or "budget"
        self.stopping = True
        if self.progress:
            self.progress.note(f"budget: ${b.spent:.2f} spent; one more attempt of {unit.teacher} may cost up to "
                               f"${b.ceiling(unit.teacher):.2f}, past ${b.limit:.2f}; launching stops")

    def _start(self, work) -> None:
        task = asyncio.create_task(work)
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    async def _attempt(self, unit: Unit) -> None:
        key = unit.key(self.store.run_id)
        started = _now()
        infra: list[str] = []
        sampling = True  # holding an in-flight slot and a share of the budget
        trajectory: Trajectory | None = None
        try:
            try:
                for _ in range(self.p.sampling.infra_retries + 1):
                    deadline = time.monotonic() + self.p.agent.max_wall_seconds  # sandbox start to verdict
                    trajectory = await self._sample(unit, key, deadline)
                    if trajectory.exit not in INFRA_EXITS:
                        break
                    infra.append(f"{trajectory.exit}: {trajectory.error}")
                attempt = Attempt(key=key, repo=unit.task.repo, trajectory=trajectory, infra_failures=infra,
                                  started_at=started)
                sampling = False
                self._sampled(unit, attempt)
                if self.progress:
                    self.progress.sampled(key)
                if trajectory.exit in INFRA_EXITS:
                    attempt.error_class = str(trajectory.exit)
                else:
                    await self._verify(unit.task, attempt, deadline)
            except StorageError as exc:  # its journal could not be written: a resume redoes it
                self._cannot_write(exc)
                return
            except Exception as exc:  # a bug: recorded with whatever was paid for, never a crashed run
                attempt = Attempt(key=key, repo=unit.task.repo, trajectory=trajectory,
                                  error_class=f"internal:{type(exc).__name__}",
                                  infra_failures=[*infra, f"{type(exc).__name__}: {exc}"[:2000]], started_at=started)
            self._finish(attempt)
        finally:
            self.state[unit.task.instance_id].inflight -= 1
            if sampling:
                self._sampled(unit, None)
            if self.progress:
                self.progress.ended(key)  # recorded or not, it is no longer in flight
            self.running.discard(asyncio.current_task())  # before waking the launcher, which checks it
            self.changed.set()

    def _sampled(self, unit: Unit, attempt: Attempt | None) -> None:
        """Sampling ended: free the slot, and turn the attempt's share of the budget into its cost."""
        self.slots.release()
        self.budget.sampled(unit.teacher)
        if attempt is not None:
            self.budget.pay(attempt)
        self.changed.set()  # the launcher may be waiting on the budget

    async def _verify(self, task: Task, attempt: Attempt, deadline: float | None = None) -> None:
        """Give a sampled attempt its verdict, or mark it `verify_error` when infrastructure
        keeps failing the verification or it passes the attempt's `deadline` (its trajectory
        stays; a resume verifies it)."""
        assert attempt.trajectory is not None
        attempt.error_class, attempt.verdict = None, None
        if not attempt.trajectory.patch.strip():
            return
        try:
            async with self.verify_slots:
                attempt.verdict = await self._by(deadline, self.verifier.verify(task, attempt.trajectory.patch))
        except (VerifyError, SandboxError, TimeoutError) as exc:
            why = (f"not verified within the attempt's max_wall_seconds ({self.p.agent.max_wall_seconds:g} s)"
                   if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}")
            attempt.error_class = VERIFY_ERROR
            attempt.infra_failures.append(f"{VERIFY_ERROR}: {why}"[:2000])

    async def _by(self, deadline: float | None, work: Coroutine[Any, Any, T],
                  late: Callable[[T], Coroutine[Any, Any, Any]] | None = None) -> T:
        """`work`'s result by `deadline` (`time.monotonic()`), else TimeoutError. Late work is
        not cancelled (an engine call in a thread cannot be stopped half-way, and what it made
        would leak): it finishes in the background and `late` gets its result to undo it."""
        if deadline is None:
            return await work
        job = asyncio.ensure_future(work)
        try:
            return await asyncio.wait_for(asyncio.shield(job), max(deadline - time.monotonic(), 0.0))
        except TimeoutError:
            self.late.add(job)
            job.add_done_callback(self.late.discard)
            if late is not None:
                job.add_done_callback(lambda done: self._undo(done, late))
            raise

    def _undo(self, done: asyncio.Future, late: Callable[[Any], Coroutine[Any, Any, Any]]) -> None:
        if not done.cancelled() and done.exception() is None:
            undo = asyncio.ensure_future(late(done.result()))
            self.late.add(undo)
            undo.add_done_callback(self.late.discard)

    async def _reverify(self, attempt: Attempt) -> None:
        """A resumed attempt that has its trajectory but no verdict: verify it, pay nothing."""
        try:
            try:
                await self._verify(self.tasks_by_id[attempt.key.instance_id], attempt)
            except Exception as exc:  # a bug: recorded, never a crashed run
                attempt.error_class = f"internal:{type(exc).__name__}"
                attempt.infra_failures.append(f"{type(exc).__name__}: {exc}"[:2000])
            self._finish(attempt)
        finally:
            self.state[attempt.key.instance_id].inflight -= 1
            if self.progress:
                self.progress.ended(attempt.key)
            self.running.discard(asyncio.current_task())
            self.changed.set()

    def _finish(self, attempt: Attempt) -> None:
        """Record a finished attempt: its file first (the truth for resume), then the warehouse."""
        attempt.finished_at = _now()
        try:
            # an attempt that infrastructure ended is sampled again on resume: its paid turns replay
            self.store.save(attempt, keep_journal=attempt.error_class in {str(e) for e in INFRA_EXITS})
        except StorageError as exc:  # not recorded, so a resume redoes it (paid turns replay from its journal)
            self._cannot_write(exc)
            return
        if self.warehouse is not None:
            self.warehouse.record_attempt(attempt, started_at=attempt.started_at, finished_at=attempt.finished_at)
        self.result.attempts.append(attempt)
        self.result.finished += 1
        self.budget.pay(attempt)
        self._absorb(attempt)
        if self.progress:
            self.progress.finished(attempt, self)

    def _cannot_write(self, exc: StorageError) -> None:
        """A run file could not be written: launch nothing more; attempts in flight finish and are
        saved if they can; the run then ends with the first such error."""
        if self.write_error is None:
            self.write_error = exc
            if self.progress:
                self.progress.note(f"{exc}; launching stops")
        self.stopping = True
        self.changed.set()

    async def _sample(self, unit: Unit, key: AttemptKey, deadline: float) -> Trajectory:
        teacher = self.teachers[unit.teacher]
        if unit.teacher in self.journal:
            teacher = JournalTeacher(teacher, self.store.journal_path(key))
        seed = zlib.crc32(f"{self.p.sampling.seed}:{key.instance_id}:{key.teacher}:{key.index}".encode())
        attempt_id = f"{key.instance_id}.{key.teacher}.{key.index}"[-60:]
        acquire = self.pool.acquire(unit.task.image, unit.task.start, workdir=unit.task.workdir, attempt_id=attempt_id)
        try:
            sandbox = await self._by(deadline, acquire, late=self.pool.release)
        except (SandboxError, TimeoutError) as exc:  # a start that slow is the engine's fault, not the model's
            error = (f"SandboxStartError: not started within max_wall_seconds ({self.p.agent.max_wall_seconds:g} s)"
                     if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}")
            return Trajectory(instance_id=key.instance_id, teacher=unit.teacher, model=teacher.model, messages=[],
                              exit=Exit.sandbox_error, error=error,
                              possibly_billed=_cut_off(teacher))
        started = time.monotonic()
        try:
            trajectory = await run_agent(unit.task, teacher, sandbox, self.p.agent, attempt_seed=seed, deadline=deadline,
                                         harness=pick(self.p.agent.harnesses, key.index))
        finally:
            await self.pool.release(sandbox)
        trajectory.teacher = unit.teacher
        trajectory.possibly_billed = _cut_off(teacher)  # the journal is gone once the attempt is saved
        trajectory.wall_seconds = trajectory.wall_seconds or time.monotonic() - started
        return trajectory

    # ------------------------------------------------------------------ signals

    def _install_signals(self) -> None:
        try:
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self.interrupt)
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, self.interrupt)
        except (NotImplementedError, RuntimeError):  # not the main thread
            pass

    def _remove_signals(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                asyncio.get_running_loop().remove_signal_handler(sig)

    def interrupt(self) -> None:
        """First call: stop launching. Second: cancel what is in flight."""
        self.interrupts += 1
        self.stopping = True
        self.result.stopped = "interrupted"
        self.changed.set()
        if self.progress:
            self.progress.note("stopping: in-flight attempts finish (Ctrl-C again cancels them)"
                               if self.interrupts == 1 else "cancelling in-flight attempts")
        if self.interrupts > 1:
            for task in list(self.running):
                task.cancel()

    async def _cancel_all(self) -> None:
        for task in [*self.running, *self.late]:
            task.cancel()
        await asyncio.gather(*self.running, *self.late, return_exceptions=True)


def _cut_off(teacher: Teacher) -> list[PossiblyBilled]:
    """The journaled requests of an attempt that never answered (`factory.journal`)."""
    return list(teacher.possibly_billed) if isinstance(teacher, JournalTeacher) else []


def _unit_id(key: AttemptKey) -> tuple[str, str, int]:
    return key.instance_id, key.teacher, key.index


def _finish_time(attempt: Attempt) -> float:
    """Sort key of finished attempts: when they finished (files from before it was recorded first)."""
    return attempt.finished_at.timestamp() if attempt.finished_at else -math.inf


def _now() -> datetime:
    return datetime.now(UTC)
