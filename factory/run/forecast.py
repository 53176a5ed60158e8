"""What a run will cost before it starts: `factory run PIPELINE --dry-run [--pilot RUN]`.

No sandbox starts and no teacher is called: the run's own allocation (`factory.run.allocation`, the
scheduler's `breadth_first` units, `max_in_flight` attempts out at once) is played over a
simulated population of tasks, several times, and the spread of the results is the range:

    pass rates   a pilot run's, per task and teacher, from its warehouse (resolved of graded
                 attempts, shrunk toward `sampling.hopeless.prior`), its tasks resampled; without
                 a pilot, one rate per task drawn from that prior (U-shaped, mean 0.28)
    cost         per attempt: the pilot's mean per teacher; the ceiling (`factory.run.budget`) as the
                 most; a teacher of unknown price has no cost figure
    kept         an attempt that passes is a kept row, up to `filters.cap.per_task` per task
                 (duplicates among them are not forecast)

`simulate` is also what `bench/cost_bench.py` runs.
"""

from __future__ import annotations

import heapq
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from factory.config import Pipeline, SamplingConfig, teacher_label
from factory.errors import UsageError
from factory.records import Task
from factory.run.allocation import Allocator
from factory.run.budget import first_ceiling
from factory.run.scheduler import breadth_first

Rates = dict[str, dict[str, float]]
"""Task id -> teacher -> the chance an attempt passes."""
SEEDS = 5
MAX_SIMULATED = 2000
"""Tasks simulated at most; a larger run's figures are scaled from them."""


@dataclass
class Outcome:
    attempts: int = 0
    dollars: float = 0.0
    kept: int = 0
    saved: dict[str, int] = field(default_factory=dict)


def simulate(rates: Rates, sampling: SamplingConfig, teachers: list[str], cap: int | None,
             cost: Callable[[str, random.Random], float], seed: int, in_flight: int | None = None,
             early_stop: bool = True) -> Outcome:
    """One run of the allocation over `rates`: attempts finish in order of a random duration. A
    task keeps at most `cap` rows; without `early_stop`, sampling goes on past it (fixed fan-out)."""
    wanted = cap if early_stop else None
    rng = random.Random(seed)
    tasks = [Task(instance_id=t, repo="simulated", problem_statement="", image="none") for t in rates]
    queue = breadth_first(tasks, teachers, sampling.attempts_per_task)
    allocator = Allocator(sampling, teachers, wanted)
    passed = dict.fromkeys(rates, 0)
    kept = dict.fromkeys(rates, 0)  # the keeper's count, with every pass a distinct row

    out, clock, running = Outcome(), 0.0, []
    while True:
        while len(running) < (in_flight or sampling.max_in_flight) and (unit := allocator.pick(queue)):
            allocator.launched(unit.task_id, unit.teacher)
            success = rng.random() < rates[unit.task_id][unit.teacher]
            heapq.heappush(running, (clock + rng.expovariate(1.0), out.attempts, unit, success, cost(unit.teacher, rng)))
            out.attempts += 1
        if not running:
            break
        clock, _, unit, success, dollars = heapq.heappop(running)
        allocator.ended(unit.task_id, unit.teacher)
        out.dollars += dollars
        passed[unit.task_id] += success
        kept[unit.task_id] = passed[unit.task_id] if cap is None else min(passed[unit.task_id], cap)
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
    cost: dict[str, float]
    """Teacher -> mean USD per attempt, where every attempt's cost was known."""
    attempts: int


def read_pilot(warehouse: Path, run_id: str, prior: tuple[float, float]) -> Pilot:
    from factory.warehouse.read import run_query

    if not warehouse.exists():
        raise UsageError(f"--pilot {run_id}: no warehouse at {warehouse}")
    found = run_query(warehouse, """
        SELECT instance_id, teacher, count(*), count(*) FILTER (WHERE passed), avg(cost_usd), count(cost_usd)
        FROM v_attempts WHERE run_id = ? AND graded GROUP BY instance_id, teacher""", [run_id]).rows
    if not found:
        raise UsageError(f"--pilot {run_id}: the warehouse {warehouse} has no graded attempt of that run")
    by_task: dict[str, dict[str, float]] = {}
    spent: dict[str, list[float]] = {}
    for task, teacher, n, passes, mean_cost, priced in found:
        by_task.setdefault(task, {})[teacher] = (passes + prior[0]) / (n + prior[0] + prior[1])
        if priced == n:
            spent.setdefault(teacher, []).extend([mean_cost] * n)
    return Pilot(run_id, list(by_task.values()), {t: statistics.fmean(c) for t, c in spent.items()},
                 sum(row[2] for row in found))


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
    """Every forecast attempt at its teacher's ceiling (`factory.budget.first_ceiling`)."""
    saved: dict[str, float]
    budget: float | None = None
    """`budget.max_cost_usd`; the simulation does not stop at it, the lines say where it would."""


def forecast(pipeline: Pipeline, tasks: int, pilot: Pilot | None = None) -> Forecast:
    s = pipeline.sampling
    labels = [teacher_label(t) for t in pipeline.teachers]
    rng = random.Random(s.seed)
    n = min(tasks, MAX_SIMULATED)
    prior = s.hopeless.prior
    if pilot is None:
        drawn = [rng.betavariate(*prior) for _ in range(n)]
        rates = {f"t{i}": dict.fromkeys(labels, p) for i, p in enumerate(drawn)}
        basis = f"pass rates drawn from the prior Beta{prior} (give --pilot RUN for a run's own)"
    else:
        mean = prior[0] / (prior[0] + prior[1])
        rates = {}
        for i in range(n):
            row = rng.choice(pilot.rates)
            rates[f"t{i}"] = {t: row.get(t, mean) for t in labels}
        unseen = [t for t in labels if not any(t in r for r in pilot.rates)]
        basis = (f"pass rates of pilot {pilot.run_id} ({len(pilot.rates)} tasks, {pilot.attempts} attempts)"
                 + (f"; {', '.join(unseen)} not in it: prior mean {mean:.2f}" if unseen else ""))
    ceilings = {teacher_label(t): first_ceiling(t, pipeline.agent) for t in pipeline.teachers}
    if pipeline.agent.max_cost_usd is not None:
        ceilings = dict.fromkeys(labels, pipeline.agent.max_cost_usd)
    known = pilot.cost if pilot else {}
    scale = tasks / n
    outcomes = [simulate(rates, s, labels, pipeline.filters.cap.most,
                         lambda teacher, _rng: known.get(teacher, 0.0), seed) for seed in range(SEEDS)]
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
        cost=cost, ceiling=ceiling, saved=saved, budget=pipeline.budget.max_cost_usd,
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
