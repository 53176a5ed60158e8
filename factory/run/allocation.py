"""Where the next attempt goes, and when a task gets no more (docs/allocation.md).

The scheduler and `bench/cost_bench.py` both drive one `Allocator`; it holds, per task and
teacher, a Beta posterior over the chance that an attempt passes the per-attempt filters (a
candidate row), and decides from it and from what the keeper keeps:

    allocator.launched(task, teacher)        an attempt starts
    allocator.ended(task, teacher)           it is no longer in flight (recorded or not)
    allocator.record(task, teacher, passed, kept)   a graded attempt finished; `kept`: the rows
                                             the dataset keeps of the task now (the keeper's count)
    allocator.pick(queue, cost)              the unit to start now, or None; units of stopped
                                             tasks leave the queue for good, counted as saved
    allocator.needs(task)                    does the task still need attempts: the cap, decided
                                             here only (the scheduler and the forecast ask it)

A task stops (`Stop`) when the dataset keeps `filters.cap.per_task` runs of it (`at_cap`), when
every teacher open to it is hopeless on it (`hopeless`: the posterior puts at least
`hopeless.mass` below `hopeless.below`) or done, or after `give_up_after_failures` failures in a
row (`gave_up`). With `sampling.tiers`, a task reaches tier k+1 only once tier k failed it
`escalate_after` times without a pass, or every teacher of tier k is done with it. With a budget
(`cost` given), the next attempt goes to the eligible unit with the most expected kept rows per
dollar; without one, the queue's breadth-first order holds.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections import deque

    from factory.config import SamplingConfig


class Stop(StrEnum):
    """Why a task gets no more attempts; each is a row in the warehouse's `task_decisions`."""

    at_cap = "at_cap"
    """The dataset keeps `filters.cap.per_task` runs of it (early stop)."""
    hopeless = "hopeless"
    """Every teacher open to it is hopeless on it or has made all its attempts, one at least hopeless."""
    gave_up = "gave_up"
    """`give_up_after_failures` failures in a row, with nothing kept."""


NOT_ESCALATED = "not_escalated"
"""The decision about a task that stopped before a later tier reached it: that tier's attempts
were never made (the cascade's saving)."""


class Unit(Protocol):
    @property
    def task_id(self) -> str: ...

    @property
    def teacher(self) -> str: ...


def beta_cdf(x: float, a: float, b: float) -> float:
    """P(p <= x) for p ~ Beta(a, b): the regularized incomplete beta function (continued fraction)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):  # the fraction converges fast on this side only
        return 1.0 - beta_cdf(1.0 - x, b, a)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    c, d, f = 1.0, 1.0 - (a + b) * x / (a + 1), 0.0
    d = 1.0 / (d if abs(d) > 1e-30 else 1e-30)
    f = d
    for m in range(1, 300):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > 1e-30 else 1e-30)
            c = 1.0 + numerator / c
            c = c if abs(c) > 1e-30 else 1e-30
            f *= c * d
        if abs(c * d - 1.0) < 1e-12:
            break
    return front * f


@dataclass
class Belief:
    """What one teacher's attempts say about one task."""

    passes: int = 0
    failures: int = 0
    inflight: int = 0
    hopeless: bool = False  # decided as each attempt is recorded (`Allocator.is_hopeless`)

    def posterior(self, prior: tuple[float, float]) -> tuple[float, float]:
        return prior[0] + self.passes, prior[1] + self.failures

    def mean(self, prior: tuple[float, float]) -> float:
        a, b = self.posterior(prior)
        return a / (a + b)


@dataclass
class TaskState:
    beliefs: dict[str, Belief] = field(default_factory=lambda: defaultdict(Belief))
    kept: int = 0
    streak: int = 0  # graded failures in a row, any teacher
    tier: int = 0  # the highest tier open to it
    stop: Stop | None = None
    saved: Counter[str] = field(default_factory=Counter)  # units never started, by why

    @property
    def inflight(self) -> int:
        return sum(b.inflight for b in self.beliefs.values())


@dataclass(frozen=True)
class Decision:
    """A recorded choice about a task: a stop, or a tier opened to it."""

    task: str
    decision: str  # a Stop, or `escalated`
    tier: int
    attempts: int  # graded attempts of the task finished when it was decided
    passes: int
    failures: int
    detail: str


class Allocator:
    def __init__(self, sampling: SamplingConfig, teachers: list[str], wanted: int | None):
        self.attempts = sampling.attempts_per_task
        self.give_up = sampling.give_up_after_failures
        self.hopeless = sampling.hopeless
        self.escalate_after = sampling.escalate_after
        self.tiers: list[list[str]] = [list(t) for t in sampling.tiers] if sampling.tiers else [list(teachers)]
        self.tier_of = {t: i for i, tier in enumerate(self.tiers) for t in tier}
        self.wanted = wanted
        self.tasks: dict[str, TaskState] = defaultdict(TaskState)
        self.decisions: list[Decision] = []
        self.saved: Counter[str] = Counter()
        """Units never started, by why: a `Stop`, or `not_escalated` (a tier the task never reached)."""

    # ------------------------------------------------------------------ events

    def launched(self, task: str, teacher: str) -> None:
        self.tasks[task].beliefs[teacher].inflight += 1

    def ended(self, task: str, teacher: str) -> None:
        self.tasks[task].beliefs[teacher].inflight -= 1

    def record(self, task: str, teacher: str, passed: bool, kept: int) -> None:
        """A graded attempt (infrastructure failures are not the model's, and not recorded here)."""
        state = self.tasks[task]
        belief = state.beliefs[teacher]
        if passed:
            belief.passes += 1
            state.streak = 0
        else:
            belief.failures += 1
            state.streak += 1
        solvable = any(b.passes for b in state.beliefs.values())  # some teacher solved it: none is hopeless
        for b in state.beliefs.values():
            b.hopeless = not solvable and self.is_hopeless(b)
        state.kept = kept
        self._decide(task, state)

    # ------------------------------------------------------------------ decisions

    def stopped(self, task: str) -> Stop | None:
        return self.tasks[task].stop

    def needs(self, task: str, in_flight: int | None = None) -> bool:
        """Whether the task still needs attempts beyond those in flight (which may all be kept):
        the rows the dataset keeps of it plus `in_flight` (by default its attempts in flight now)
        stay under `filters.cap.per_task`. The one place the cap is decided."""
        state = self.tasks[task]
        in_flight = state.inflight if in_flight is None else in_flight
        return self.wanted is None or state.kept + in_flight < self.wanted

    def is_hopeless(self, belief: Belief) -> bool:
        h = self.hopeless
        if not h.enabled or belief.passes + belief.failures < h.min_attempts:
            return False
        return beta_cdf(h.below, *belief.posterior(h.prior)) >= h.mass

    def done(self, state: TaskState, teacher: str) -> bool:
        """Whether `teacher` makes no more attempts on the task: hopeless on it, or all made."""
        belief = state.beliefs[teacher]
        return belief.hopeless or belief.passes + belief.failures + belief.inflight >= self.attempts

    def _decide(self, task: str, state: TaskState) -> None:
        if state.stop is not None:
            return
        while state.tier + 1 < len(self.tiers) and self._escalates(state):
            state.tier += 1
            self._note(task, state, "escalated", f"tier {state.tier} failed it; tier {state.tier + 1} "
                       f"({', '.join(self.tiers[state.tier])}) may try it")
        stop, why = None, ""
        if not self.needs(task, in_flight=0):
            stop, why = Stop.at_cap, f"the dataset keeps {state.kept} run(s) of it (filters.cap.per_task)"
        elif self.give_up is not None and state.streak >= self.give_up and not state.kept:
            stop, why = Stop.gave_up, f"{state.streak} failures in a row (sampling.give_up_after_failures)"
        else:
            open_ = [t for tier in self.tiers[: state.tier + 1] for t in tier]
            hopeless = [t for t in open_ if state.beliefs[t].hopeless]
            if hopeless and all(self.done(state, t) for t in open_) and state.tier + 1 == len(self.tiers):
                stop, why = Stop.hopeless, "posterior pass rate below {:g} with probability >= {:g} for {}".format(
                    self.hopeless.below, self.hopeless.mass, ", ".join(hopeless))
        if stop is not None:
            state.stop = stop
            self._note(task, state, stop, why)

    def _escalates(self, state: TaskState) -> bool:
        tier = self.tiers[state.tier]
        passes = sum(state.beliefs[t].passes for t in tier)
        failures = sum(state.beliefs[t].failures for t in tier)
        return (not passes and failures >= self.escalate_after) or all(self.done(state, t) for t in tier)

    def _note(self, task: str, state: TaskState, decision: str, detail: str) -> None:
        passes = sum(b.passes for b in state.beliefs.values())
        failures = sum(b.failures for b in state.beliefs.values())
        self.decisions.append(Decision(task, str(decision), state.tier + 1, passes + failures, passes, failures, detail))

    # ------------------------------------------------------------------ choosing

    def allows(self, unit: Unit) -> bool:
        """Whether `unit` may start now: its tier is open, its teacher not done, the task needs
        it beyond what is in flight, and the failure allowance is not bet away."""
        state = self.tasks[unit.task_id]
        if self.tier_of.get(unit.teacher, 0) > state.tier or state.beliefs[unit.teacher].hopeless:
            return False
        if not self.needs(unit.task_id):
            return False
        return self.give_up is None or state.kept > 0 or state.streak + state.inflight < self.give_up

    def value(self, unit: Unit, cost: Callable[[str], float]) -> float:
        """Expected kept rows per dollar of one more attempt: the posterior mean pass rate over
        the teacher's expected cost (a free teacher's value is its mean pass rate, times a million)."""
        mean = self.tasks[unit.task_id].beliefs[unit.teacher].mean(self.hopeless.prior)
        return mean / max(cost(unit.teacher), 1e-6)

    def pick(self, queue: deque, cost: Callable[[str], float] | None = None,
             dropped: Callable[[Unit], None] | None = None) -> Unit | None:
        """Pop the unit to start now (None: none may start yet). Units of stopped tasks, and of
        teachers hopeless on their task, leave the queue for good (each told to `dropped`).
        Without `cost`, the first eligible unit in queue order; with it, the one of most `value`
        (the first of equals)."""
        best, best_value, i = None, -1.0, 0
        while i < len(queue):
            unit = queue[i]
            state = self.tasks[unit.task_id]
            if state.stop is not None or state.beliefs[unit.teacher].hopeless:
                self._save(unit, state)
                del queue[i]
                if dropped is not None:
                    dropped(unit)
                continue
            if self.allows(unit):
                if cost is None:
                    del queue[i]
                    return unit
                v = self.value(unit, cost)
                if v > best_value:
                    best, best_value = i, v
            i += 1
        if best is None:
            return None
        unit = queue[best]
        del queue[best]
        return unit

    def _save(self, unit: Unit, state: TaskState) -> None:
        """Count a unit that will never start: for its task's stop, or, in a tier the task never
        reached, for the cascade (`not_escalated`: the tiers before sufficed)."""
        reason = str(state.stop or Stop.hopeless)
        if self.tier_of.get(unit.teacher, 0) > state.tier:
            if not state.saved[NOT_ESCALATED]:
                self._note(unit.task_id, state, NOT_ESCALATED, f"stopped ({reason}) before tier {state.tier + 2}")
            reason = NOT_ESCALATED
        self.saved[reason] += 1
        state.saved[reason] += 1

    def rows(self, run_id: str) -> list[dict[str, object]]:
        """The decisions as rows of the warehouse's `task_decisions`, with the attempts each saved."""
        return [{"run_id": run_id, "instance_id": d.task, "decision": d.decision, "tier": d.tier,
                 "attempts": d.attempts, "passes": d.passes, "failures": d.failures,
                 "saved": self.tasks[d.task].saved[d.decision], "detail": d.detail} for d in self.decisions]
