"""What a run will cost before it starts: `factory run PIPELINE --dry-run [--pilot RUN]`.

No sandbox starts and no teacher is called: the run's own allocation (`factory.run.allocation`, the
scheduler's `breadth_first` units, `max_in_flight` attempts out at once) is played over a
simulated population of tasks, several times, and the spread of the results is the range:

    pass rates   a pilot run's, per task and teacher, from its warehouse (resolved of graded
                 attempts, shrunk toward `sampling.hopeless.prior`), its tasks resampled; without
                 a pilot, one rate per task drawn from that prior (U-shaped, mean 0.28)
    cost         per attempt: the pilot's mean per teacher; the ceiling (`factory.run.budget`) as the
                 most; a teacher of unknown price has no cost figure
    passes       an attempt passes when it survives the per-attempt filters (resolved, loops,
                 length): the keeper's candidate, what the allocator counts
    kept         a task's first pass is a row; each later pass is a new row at the pilot task's
                 rate of new rows among its later passes (dedup drops repeats, so a task that is
                 solved one way needs more attempts to reach its cap), up to `filters.cap.per_task`

`simulate` is also what `bench/cost_bench.py` runs.
"""

from __future__ import annotations

import heapq
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from factory.config import SamplingConfig
from factory.errors import UsageError
from factory.records import Task
from factory.run.allocation import Allocator
from factory.run.scheduler import Plan, breadth_first

Rates = dict[str, dict[str, float]]
"""Task id -> teacher -> the chance an attempt passes."""
SEEDS = 20
"""Simulations per forecast: the range is their lowest to highest, so it must be wide enough to
hold one real run of the same population (five held it about two times in three)."""
MAX_SIMULATED = 2000
"""Tasks simulated at most; a larger run's figures are scaled from them."""


@dataclass(frozen=True)
class PilotAttempt:
    """One graded attempt of a pilot run, as the forecast reads it."""

    task: str
    teacher: str
    passed: bool
    """It survived the per-attempt filters: a candidate row, what the allocator counts as a pass."""
    repeat: bool = False
    """A pass that a per-task filter other than the cap dropped (dedup: a duplicate of a kept row)."""
    cost: float | None = None


@dataclass
class Outcome:
    attempts: int = 0
    dollars: float = 0.0
    kept: int = 0
    saved: dict[str, int] = field(default_factory=dict)
    record: list[PilotAttempt] = field(default_factory=list)
    """Every simulated attempt in the order it finished: a simulated run can be a pilot."""


def simulate(rates: Rates, sampling: SamplingConfig, teachers: list[str], cap: int | None,
             cost: Callable[[str, random.Random], float], seed: int, in_flight: int | None = None,
             early_stop: bool = True, fresh: dict[str, float] | None = None) -> Outcome:
    """One run of the allocation over `rates`: attempts finish in order of a random duration. A
    task keeps at most `cap` rows; without `early_stop`, sampling goes on past it (fixed fan-out).
    `fresh`: task -> the chance that a pass after its first is a new row rather than a duplicate
    (absent: every pass is a new row)."""
    wanted = cap if early_stop else None
    rng = random.Random(seed)
    tasks = [Task(instance_id=t, repo="simulated", problem_statement="", image="none") for t in rates]
    queue = breadth_first(tasks, teachers, sampling.attempts_per_task)
    allocator = Allocator(sampling, teachers, wanted)
    passed = dict.fromkeys(rates, 0)
    rows = dict.fromkeys(rates, 0)  # new rows among the passes
    kept = dict.fromkeys(rates, 0)  # the keeper's count: rows up to the cap

    out, clock, running = Outcome(), 0.0, []
    while True:
        while len(running) < (in_flight or sampling.max_in_flight) and (unit := allocator.pick(queue)):
            allocator.launched(unit.task_id, unit.teacher)
            success = rng.random() < rates[unit.task_id][unit.teacher]
            new = rng.random() < (fresh or {}).get(unit.task_id, 1.0)  # drawn at launch: the seed fixes the run
            heapq.heappush(running, (clock + rng.expovariate(1.0), out.attempts, unit, success, new,
                                     cost(unit.teacher, rng)))
            out.attempts += 1
        if not running:
            break
        clock, _, unit, success, new, dollars = heapq.heappop(running)
        allocator.ended(unit.task_id, unit.teacher)
        out.dollars += dollars
        row = success and (new or not passed[unit.task_id])
        out.record.append(PilotAttempt(unit.task_id, unit.teacher, success, repeat=success and not row, cost=dollars))
        rows[unit.task_id] += row
        passed[unit.task_id] += success
        kept[unit.task_id] = rows[unit.task_id] if cap is None else min(rows[unit.task_id], cap)
        allocator.record(unit.task_id, unit.teacher, success, kept[unit.task_id])
    out.kept = sum(kept.values())
    out.saved = dict(allocator.saved)
    return out


# ------------------------------------------------------------------------------ pilot


@dataclass
class Pilot:
    run_id: str
    rates: list[dict[str, float]]
    """Per pilot task: teacher -> pass rate (posterior mean under the prior)."""
    fresh: list[float]
    """Per pilot task (as `rates`): the chance that a pass after its first is a new row."""
    cost: dict[str, float]
    """Teacher -> mean USD per attempt, where every attempt's cost was known."""
    attempts: int

    @classmethod
    def of(cls, run_id: str, attempts: list[PilotAttempt], prior: tuple[float, float]) -> Pilot:
        by_task: dict[str, list[PilotAttempt]] = {}
        for a in attempts:
            by_task.setdefault(a.task, []).append(a)
        # later passes and the new rows among them, per task; a task with one pass says nothing of
        # repeats, so each task's share is shrunk toward the pilot's own by one later pass
        later = {t: (max(sum(a.passed for a in tried) - 1, 0), sum(a.repeat for a in tried))
                 for t, tried in by_task.items()}
        seen = sum(n for n, _ in later.values())
        pooled = 1.0 - sum(r for _, r in later.values()) / seen if seen else 1.0
        rates, fresh = [], []
        for task, tried in by_task.items():
            per: dict[str, float] = {}
            for teacher in dict.fromkeys(a.teacher for a in tried):
                mine = [a for a in tried if a.teacher == teacher]
                per[teacher] = (sum(a.passed for a in mine) + prior[0]) / (len(mine) + prior[0] + prior[1])
            rates.append(per)
            n, repeats = later[task]
            fresh.append((n - repeats + pooled) / (n + 1))
        spent: dict[str, list[float]] = {}
        for tried in by_task.values():  # a task's attempts of a teacher count where each was priced
            for teacher in dict.fromkeys(a.teacher for a in tried):
                costs = [a.cost for a in tried if a.teacher == teacher]
                if all(c is not None for c in costs):
                    spent.setdefault(teacher, []).extend(c for c in costs if c is not None)
        return cls(run_id, rates, fresh, {t: statistics.fmean(c) for t, c in spent.items()}, len(attempts))


def per_task_filters() -> tuple[set[str], set[str]]:
    """The filters that judge an attempt on its own, and those after them that drop repeats: the
    keeper's own split of the chain (`Keeper.each`, `Keeper.rest`), less the cap."""
    from factory.filters import FiltersConfig
    from factory.filters.cap import CapFilter
    from factory.run.keeper import Keeper

    keeper = Keeper(FiltersConfig())
    return ({f.name for f in keeper.each.filters},
            {f.name for f in keeper.rest.filters} - {CapFilter.name})


def read_pilot(warehouse: Path, run_id: str, prior: tuple[float, float]) -> Pilot:
    from factory.warehouse.read import run_query

    if not warehouse.exists():
        raise UsageError(f"--pilot {run_id}: no warehouse at {warehouse}")
    found = run_query(warehouse, """
        SELECT instance_id, teacher, passed, dropped_by, cost_usd FROM v_attempts
        WHERE run_id = ? AND graded ORDER BY instance_id, teacher, attempt_index""", [run_id]).rows
    if not found:
        raise UsageError(f"--pilot {run_id}: the warehouse {warehouse} has no graded attempt of that run")
    each, repeats = per_task_filters()
    return Pilot.of(run_id, [PilotAttempt(task, teacher, passed=bool(passed) and dropped_by not in each,
                                          repeat=dropped_by in repeats, cost=cost)
                             for task, teacher, passed, dropped_by, cost in found], prior)


# ------------------------------------------------------------------------------ forecast


@dataclass
class Forecast:
    tasks: int
    basis: str
    attempts: tuple[float, float]
    most_attempts: int
    kept: tuple[float, float]
    cost: tuple[float, float] | None
    """Expected USD, low to high over the simulations; None without a pilot's cost or a price."""
    ceiling: float | None
    """Every forecast attempt at its teacher's ceiling (`factory.run.budget.first_ceiling`)."""
    saved: dict[str, float]
    budget: float | None = None
    """`budget.max_cost_usd`; the simulation does not stop at it, the lines say where it would."""


Population = tuple[Rates, dict[str, float] | None]
"""Simulated tasks' pass rates, and each task's chance that a later pass is a new row (None: always)."""


def population(plan: Plan, n: int, pilot: Pilot | None, rng: random.Random) -> Population:
    """`n` tasks: pass rates drawn from the prior, or a pilot's tasks drawn with replacement."""
    labels = list(plan.budget.first)
    prior = plan.sampling.hopeless.prior
    if pilot is None:
        return {f"t{i}": dict.fromkeys(labels, rng.betavariate(*prior)) for i in range(n)}, None
    mean = prior[0] / (prior[0] + prior[1])
    rates, fresh = {}, {}
    for i in range(n):
        row = rng.randrange(len(pilot.rates))  # both figures of one pilot task
        rates[f"t{i}"] = {t: pilot.rates[row].get(t, mean) for t in labels}
        fresh[f"t{i}"] = pilot.fresh[row]
    return rates, fresh


def forecast(plan: Plan, tasks: int, pilot: Pilot | None = None) -> Forecast:
    """Each of the `SEEDS` simulations draws its own population, so the range holds what is not
    known of the tasks (a pilot of 20 tasks says little of the 21st) as well as chance. `plan`:
    the scheduler's own (`factory.run.runner.plan_of`)."""
    s = plan.sampling
    labels = list(plan.budget.first)  # every teacher, in the pipeline's order
    rng = random.Random(s.seed)
    n = min(tasks, MAX_SIMULATED)
    prior = s.hopeless.prior
    if pilot is None:
        basis = f"pass rates drawn from the prior Beta{prior} (give --pilot RUN for a run's own)"
    else:
        mean = prior[0] / (prior[0] + prior[1])
        unseen = [t for t in labels if not any(t in r for r in pilot.rates)]
        basis = (f"pass rates of pilot {pilot.run_id} ({len(pilot.rates)} tasks, {pilot.attempts} attempts)"
                 + (f"; {', '.join(unseen)} not in it: prior mean {mean:.2f}" if unseen else ""))
    ceilings = {t: plan.budget.first_ceiling(t) for t in labels}
    known = pilot.cost if pilot else {}
    scale = tasks / n
    cap = plan.filters.cap.most
    outcomes = []
    for seed in range(SEEDS):
        rates, fresh = population(plan, n, pilot, rng)
        outcomes.append(simulate(rates, s, labels, cap, lambda teacher, _rng: known.get(teacher, 0.0), seed,
                                 fresh=fresh))
    each = [ceilings[t] for t in labels]
    ceiling = None if any(c is None for c in each) else max(each) * max(o.attempts for o in outcomes) * scale
    cost = None
    if all(t in known for t in labels):
        cost = (min(o.dollars for o in outcomes) * scale, max(o.dollars for o in outcomes) * scale)
    saved: dict[str, float] = {}
    for o in outcomes:
        for why, k in o.saved.items():
            saved[why] = saved.get(why, 0.0) + k * scale / SEEDS
    return Forecast(
        tasks=tasks, basis=basis,
        attempts=(min(o.attempts for o in outcomes) * scale, max(o.attempts for o in outcomes) * scale),
        most_attempts=tasks * len(labels) * s.attempts_per_task,
        kept=(min(o.kept for o in outcomes) * scale, max(o.kept for o in outcomes) * scale),
        cost=cost, ceiling=ceiling, saved=saved, budget=plan.budget.limit,
    )


def forecast_lines(f: Forecast) -> list[str]:
    def span(lo: float, hi: float, fmt: str = "{:.0f}") -> str:
        a, b = fmt.format(lo), fmt.format(hi)
        return a if a == b else f"{a}-{b}"

    lines = [f"{f.tasks} task(s); {f.basis}",
             f"attempts {span(*f.attempts)} (of {f.most_attempts} at most), kept rows {span(*f.kept)}"]
    money = []
    if f.cost is not None:
        money.append(f"expected {span(*f.cost, '${:.2f}')}")
    if f.ceiling is not None:
        money.append(f"at most ${f.ceiling:.2f} (every attempt at its ceiling)")
    lines.append("cost " + (", ".join(money) if money else "unknown (a teacher has no price and no pilot cost)"))
    if f.budget is not None and f.cost is not None and f.cost[1] > f.budget:
        per = f.cost[1] / max(f.attempts[1], 1)
        lines.append(f"budget ${f.budget:.2f} runs out first: after about {f.budget / per:.0f} attempts")
    elif f.budget is not None and f.cost is not None:
        lines.append(f"budget ${f.budget:.2f} covers the expected cost")
    elif f.budget is not None and f.ceiling is not None and f.ceiling > f.budget:
        per = f.ceiling / max(f.attempts[1], 1)
        lines.append(f"budget ${f.budget:.2f}: at least {int(f.budget // per)} attempts fit, each at its ceiling")
    if f.saved:
        lines.append("never made " + ", ".join(f"{v:.0f} by {k}" for k, v in sorted(f.saved.items())))
    return lines
