"""Cost bench: attempts and dollars per kept row, fixed fan-out against factory's allocation.

A simulated population of tasks, no Docker: pass rates drawn from a skewed mixture (half near 0,
some in between, a fifth near 1, as SWE-smith's 17,906 attempts for 5,016 kept runs suggest),
and two teachers, a cheap weak one and a dear strong one. The simulation drives the scheduler's
own decision code, `factory.allocation.Allocator` over the scheduler's `breadth_first` units with
`max_in_flight` attempts out at once (finishing in order of a random duration), so what it
measures is what `factory run` would decide. A kept row is an attempt that passed, up to the
cap of 3 per task (the keeper's count, with no duplicates in this population).

    fixed      6 attempts per task and teacher, every one made (no cap, no hopeless stop)
    adaptive   the defaults: early stop at the cap, hopeless teachers stop (Beta posterior)
    cascade    adaptive, and the dear teacher only after the cheap one failed a task twice

The last two lines compare the cascade (factory's allocation with tiers) with fixed fan-out.
"""

from __future__ import annotations

import argparse
import heapq
import random
import sys
from dataclasses import dataclass

from factory.allocation import Allocator
from factory.config import SamplingConfig
from factory.records import Task
from factory.scheduler import breadth_first

CAP = 3
TEACHERS = {  # label: (mean USD per attempt, pass rate as a share of the task's own)
    "cheap": (0.25, 0.6),
    "dear": (1.25, 1.0),
}


def population(n: int, rng: random.Random) -> dict[str, float]:
    """Task id -> the dear teacher's pass rate on it."""
    rates = {}
    for i in range(n):
        x = rng.random()
        p = rng.betavariate(0.3, 12) if x < 0.5 else rng.betavariate(2, 2) if x < 0.8 else rng.betavariate(10, 1)
        rates[f"task-{i:04d}"] = p
    return rates


@dataclass
class Outcome:
    attempts: int = 0
    dollars: float = 0.0
    kept: int = 0
    saved: dict[str, int] | None = None


def simulate(rates: dict[str, float], sampling: SamplingConfig, wanted: int | None, seed: int,
             in_flight: int = 8) -> Outcome:
    rng = random.Random(seed)
    tasks = [Task(instance_id=t, repo="sim", problem_statement="", image="none") for t in rates]
    queue = breadth_first(tasks, list(TEACHERS), sampling.attempts_per_task)
    allocator = Allocator(sampling, list(TEACHERS), wanted)
    passed = dict.fromkeys(rates, 0)
    kept = dict.fromkeys(rates, 0)

    def needs(task: str, inflight: int = 0) -> bool:  # Keeper.needs
        return wanted is None or kept[task] + inflight < wanted

    out, clock, running = Outcome(), 0.0, []
    while True:
        while len(running) < in_flight and (unit := allocator.pick(queue, needs)) is not None:
            allocator.launched(unit.task_id, unit.teacher)
            price, share = TEACHERS[unit.teacher]
            success = rng.random() < rates[unit.task_id] * share
            cost = price * rng.lognormvariate(0, 0.3)
            heapq.heappush(running, (clock + rng.expovariate(1.0), out.attempts, unit, success, cost))
            out.attempts += 1
        if not running:
            break
        clock, _, unit, success, cost = heapq.heappop(running)
        allocator.ended(unit.task_id, unit.teacher)
        out.dollars += cost
        passed[unit.task_id] += success
        kept[unit.task_id] = min(passed[unit.task_id], CAP)
        allocator.record(unit.task_id, unit.teacher, success, kept[unit.task_id])
    out.kept = sum(kept.values())
    out.saved = dict(allocator.saved)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rates = population(args.tasks, random.Random(args.seed))
    fixed = SamplingConfig(attempts_per_task=6, hopeless={"enabled": False})
    adaptive = SamplingConfig(attempts_per_task=6)
    cascade = SamplingConfig(attempts_per_task=6, tiers=[["cheap"], ["dear"]])
    runs = {
        "fixed": simulate(rates, fixed, None, args.seed),
        "adaptive": simulate(rates, adaptive, CAP, args.seed),
        "cascade": simulate(rates, cascade, CAP, args.seed),
    }
    near0 = sum(p < 0.05 for p in rates.values()) / len(rates)
    print(f"cost bench: {args.tasks} simulated tasks ({near0:.0%} with a pass rate under 5%), teachers "
          + ", ".join(f"{t} ${c:.2f}/attempt x{s:g} pass rate" for t, (c, s) in TEACHERS.items()))
    print(f"  {'allocation':10} {'attempts':>9} {'dollars':>10} {'kept':>6} {'att/kept':>9} {'$/kept':>8}  saved")
    for name, r in runs.items():
        saved = ", ".join(f"{k} {v}" for k, v in sorted((r.saved or {}).items())) or "-"
        print(f"  {name:10} {r.attempts:9d} {r.dollars:10.2f} {r.kept:6d} {r.attempts / r.kept:9.2f} "
              f"{r.dollars / r.kept:8.3f}  {saved}")
    f, a = runs["fixed"], runs["cascade"]
    att = (a.attempts / a.kept, f.attempts / f.kept)
    usd = (a.dollars / a.kept, f.dollars / f.kept)
    print(f"kept rows: adaptive {a.kept}, fixed {f.kept}, {a.kept / f.kept - 1:+.1%}")
    print(f"dollars per kept: adaptive {usd[0]:.3f}, fixed {usd[1]:.3f}, ratio {usd[0] / usd[1]:.2f}")
    print(f"attempts per kept: adaptive {att[0]:.2f}, fixed {att[1]:.2f}, ratio {att[0] / att[1]:.2f}")
    ok = att[0] / att[1] <= 0.7 and usd[0] / usd[1] <= 0.7 and abs(a.kept / f.kept - 1) <= 0.05
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
