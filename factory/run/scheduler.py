"""The scheduler alone owns concurrency: attempts fanned out over tasks x teachers, under limits.

    units (task, teacher, index), breadth first ─► launch while eligible ─► executor.sample: sandbox,
      run_agent (teacher turns journaled) ─► release the slot ─► executor.verify (concurrently)
      ─► attempt file (atomic) ─► warehouse ─► task state (early stop, give-up)

Which unit starts next, and when a task gets no more, is `factory.run.allocation`'s to say: early
stop once the runs the dataset keeps of it (`factory.run.keeper`: the pipeline's own filter chain)
plus the attempts in flight reach `filters.cap.per_task`; hopeless teachers, give-up, tiers of
a cascade, and under a budget the most expected kept rows per dollar.

The executor (`factory.executor`) is where that work runs: this process's pool and verifier, or
the nodes of a Ray cluster; the scheduler is given it (it never builds one), and every decision
above stays here.

Infrastructure failures (engine fault, sandbox removed, teacher outage after retries) are redone up to `infra_retries` times and recorded as
such; a verification that the engine keeps failing records the attempt with its trajectory
and `error_class = verify_error`. Resuming a run redoes what infrastructure left undone: it
verifies attempts that have a trajectory but no verdict, and samples again the attempts that
infrastructure ended (paid turns replay from the journal, so nothing is paid twice); it folds
the finished attempts into task state in the order they finished, as the run that wrote them
did. Budget: a unit starts only while the cost spent plus the ceilings of the attempts in
flight, its own included, stay within `budget.max_cost_usd` (`factory.run.budget`). Signals: a first
Ctrl-C stops launching and lets attempts in flight finish; a second cancels them (their
sandboxes are removed on the way out).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import signal
import time
import zlib
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime

from factory.atomic import write_atomic
from factory.config import SamplingConfig
from factory.errors import SandboxError, StorageError, VerifyError
from factory.filters import FiltersConfig
from factory.protocols import Executor, Sampled, Teacher
from factory.records import INFRA_EXITS, Attempt, AttemptKey, Task, Trajectory
from factory.run.allocation import Allocator, Stop
from factory.run.budget import Budget, Terms
from factory.run.folder import RunStore
from factory.run.keeper import Keeper

VERIFY_ERROR = "verify_error"  # error_class of an attempt whose verification infrastructure failed


@dataclass(frozen=True)
class Plan:
    """What the scheduler needs of the pipeline, and no more: made by the run
    (`factory.run.runner.plan_of`); the forecast plays the same plan."""

    sampling: SamplingConfig
    filters: FiltersConfig
    """The keeper's chain (when the scheduler is given none), and the cap, `filters.cap.most`."""
    verifications: int
    """`verifier.concurrency()`: verifications at once."""
    max_wall_seconds: float
    """`agent.max_wall_seconds`: an attempt's deadline, from its sandbox's start to its verdict."""
    budget: Terms


@dataclass(frozen=True)
class Unit:
    task: Task
    teacher: str
    index: int

    @property
    def task_id(self) -> str:
        return self.task.instance_id

    def key(self, run_id: str) -> AttemptKey:
        return AttemptKey(run_id=run_id, instance_id=self.task.instance_id, teacher=self.teacher, index=self.index)


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
    saved: dict[str, int] = field(default_factory=dict)  # attempts never made, by why (factory.run.allocation)
    attempts: list[Attempt] = field(default_factory=list)


class Scheduler:
    def __init__(
        self,
        plan: Plan,
        tasks: list[Task],
        teachers: dict[str, Teacher],
        store: RunStore,
        *,
        executor: Executor,
        warehouse=None,
        progress=None,
        keeper: Keeper | None = None,
    ):
        self.plan = plan
        self.tasks = tasks
        self.teachers = teachers
        self.store = store
        self.executor = executor
        """Where attempts run (this process, or a Ray cluster), made for the run by whoever runs it
        (`factory.executor.open_executor`); what runs and when is decided here."""
        self.late = executor.late  # work that passed an attempt's deadline, finishing unawaited
        self.warehouse = warehouse
        self.progress = progress
        self.tasks_by_id = {t.instance_id: t for t in tasks}
        self.keeper = keeper or Keeper(plan.filters)
        self.allocator = Allocator(plan.sampling, list(teachers), plan.filters.cap.most)
        self.result = RunResult(tasks=len(tasks), cap=self.allocator.wanted)
        self.slots = asyncio.Semaphore(plan.sampling.max_in_flight)
        self.verify_slots = asyncio.Semaphore(plan.verifications)
        self.changed = asyncio.Event()
        self.running: set[asyncio.Task] = set()
        self.stopping = False
        self.interrupts = 0
        self.budget = Budget(plan.budget)
        self.write_error: StorageError | None = None  # the first run file that could not be written
        self.outstanding: Counter[str] = Counter()  # per image: units queued or in flight (`_settled`)

    # ------------------------------------------------------------------ plan

    def _units(self, pending: set[tuple[str, str, int]]) -> deque[Unit]:
        """Every unit but the attempts finished already or `pending` (sampled, only their verdict
        is missing), breadth first."""
        done = {_unit_id(a.key) for a in self.result.attempts} | pending
        return breadth_first(self.tasks, list(self.teachers), self.plan.sampling.attempts_per_task, done)

    def _absorb(self, attempt: Attempt) -> None:
        """Fold a finished attempt into its task's state (the keeper's, then the allocator's)."""
        task = attempt.key.instance_id
        if task not in self.tasks_by_id:
            return
        was_needed = self.allocator.needs(task, in_flight=0)
        passed = self.keeper.add(attempt)  # a failed one changes nothing the keeper keeps
        if passed or attempt.error_class is None:  # infrastructure failures are not the model's
            self.allocator.record(task, attempt.key.teacher, passed, len(self.keeper.kept(task)))
        self.result.kept = self.keeper.total
        self.result.at_cap += was_needed and not self.allocator.needs(task, in_flight=0)
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
        """Pop the unit that may start now (`Allocator.pick`); units of stopped tasks leave for good.
        Without a budget the scan ends at the first eligible unit (O(in flight) on runs of 100k
        units); under one it weighs every queued unit's expected kept rows per dollar."""
        cost = self.budget.expected if self.budget.limit is not None else None
        return self.allocator.pick(queue, cost, dropped=lambda unit: self._settled(unit.task.image))

    def _record_decisions(self) -> None:
        """The run's allocation decisions, worked out again from every attempt on a resume, into
        the result, `allocation.json` and the warehouse's `task_decisions`."""
        self.result.saved = dict(self.allocator.saved)
        self.result.not_needed = self.allocator.saved[Stop.at_cap]
        rows = self.allocator.rows(self.store.run_id)
        with contextlib.suppress(OSError):  # derived: a resume or `factory build` writes it again
            write_atomic(self.store.folder / "allocation.json",
                         json.dumps({"saved": self.result.saved, "decisions": rows}, indent=1, default=str))
        if self.warehouse is not None:
            self.warehouse.record_task_decisions(self.store.run_id, rows)

    # ------------------------------------------------------------------ run

    async def run(self) -> RunResult:
        unverified: list[Attempt] = []
        # in the order they finished, so task state (the give-up streak) comes out as it did
        for attempt in sorted(self.store.attempts(), key=_finish_time):
            if self.warehouse is not None:  # re-sync: the files are the truth, rows are derived
                self.warehouse.resync([attempt])
            self.budget.pay(attempt)  # whatever became of it, what it cost is spent (a redo replaces it)
            if attempt.error_class == VERIFY_ERROR and attempt.key.instance_id in self.tasks_by_id:
                unverified.append(attempt)  # verified again below; its sampling is done and paid
            elif attempt.error_class is None:
                self.result.attempts.append(attempt)
                self.result.resumed += 1
                self._absorb(attempt)
            # any other error_class: infrastructure ended the sampling; `_units` queues it again
        queue = self._units(pending={_unit_id(a.key) for a in unverified})
        self.outstanding = Counter(u.task.image for u in queue) + Counter(self.tasks_by_id[a.key.instance_id].image
                                                                          for a in unverified)
        if self.progress:
            self.progress.start(total=len(queue) + len(unverified) + self.result.resumed, done=self.result.resumed,
                                before=self.result.attempts, kept=self.result.kept, spent=self.result.spent_usd)
        self._install_signals()
        try:
            for attempt in unverified:
                self.allocator.launched(attempt.key.instance_id, attempt.key.teacher)  # it may yet be kept
                self._start(self._reverify(attempt))
                if self.progress:
                    self.progress.reverifying(attempt.key)
            await self._launch(queue)
            while self.running:
                await asyncio.wait(set(self.running), return_when=asyncio.FIRST_COMPLETED)
            await self.late.drain()  # work that came late, and the release of what it made
            self._record_decisions()
        finally:
            await self._cancel_all()
            self._remove_signals()
        if self.write_error is not None:
            raise self.write_error
        return self.result

    async def _launch(self, queue: deque[Unit]) -> None:
        while queue and not self.stopping:
            self.executor.prewarm(queue[0].task)  # the next image, ahead of need
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
            self.allocator.launched(unit.task_id, unit.teacher)
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
                for _ in range(self.plan.sampling.infra_retries + 1):
                    deadline = time.monotonic() + self.plan.max_wall_seconds  # sandbox start to verdict
                    sampled = await self._sample(unit, key, deadline)
                    trajectory = sampled.trajectory
                    if trajectory.exit not in INFRA_EXITS:
                        break
                    infra.append(f"{trajectory.exit}: {trajectory.error}")
                attempt = Attempt(key=key, repo=unit.task.repo, trajectory=trajectory, infra_failures=infra,
                                  started_at=started, node=sampled.node)
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
            self.allocator.ended(unit.task_id, unit.teacher)
            self._settled(unit.task.image)
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
        state = attempt.trajectory.final_state  # a terminal task's: judged even when its work dir is unchanged
        if not attempt.trajectory.patch.strip() and not state:
            return
        try:
            async with self.verify_slots:
                verifying = self.executor.verify(task, attempt.trajectory.patch, state) if state else \
                    self.executor.verify(task, attempt.trajectory.patch)
                attempt.verdict = await self.late.by(deadline, verifying)
        except (VerifyError, SandboxError, TimeoutError) as exc:
            why = (f"not verified within the attempt's max_wall_seconds ({self.plan.max_wall_seconds:g} s)"
                   if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}")
            attempt.error_class = VERIFY_ERROR
            attempt.infra_failures.append(f"{VERIFY_ERROR}: {why}"[:2000])

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
            self.allocator.ended(attempt.key.instance_id, attempt.key.teacher)
            self._settled(self.tasks_by_id[attempt.key.instance_id].image)
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

    async def _sample(self, unit: Unit, key: AttemptKey, deadline: float) -> Sampled:
        seed = zlib.crc32(f"{self.plan.sampling.seed}:{key.instance_id}:{key.teacher}:{key.index}".encode())
        return await self.executor.sample(unit.task, key, seed, deadline)

    def _settled(self, image: str) -> None:
        """A unit of `image` ran or was dropped; with none left, the pool may let the image go."""
        self.outstanding[image] -= 1
        if self.outstanding[image] == 0:
            self.executor.done_with(image)

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
        for task in self.running:
            task.cancel()
        await asyncio.gather(*self.running, return_exceptions=True)
        await self.late.cancel()


def breadth_first(tasks: list[Task], teachers: list[str], attempts: int,
                  done: set[tuple[str, str, int]] = frozenset()) -> deque[Unit]:
    """Every task's attempt 0, then every task's attempt 1, ...; except the units in `done`."""
    units = deque()
    for index in range(attempts):
        for task in tasks:
            for teacher in teachers:
                if (task.instance_id, teacher, index) not in done:
                    units.append(Unit(task, teacher, index))
    return units


def _unit_id(key: AttemptKey) -> tuple[str, str, int]:
    return key.instance_id, key.teacher, key.index


def _finish_time(attempt: Attempt) -> float:
    """Sort key of finished attempts: when they finished (files from before it was recorded first)."""
    return attempt.finished_at.timestamp() if attempt.finished_at else -math.inf


def _now() -> datetime:
    return datetime.now(UTC)
