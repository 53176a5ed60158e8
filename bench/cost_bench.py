"""Cost bench: attempts and dollars per kept row, fixed fan-out against factory's allocation.

A simulated population of tasks, no Docker: pass rates drawn from a skewed mixture (half near 0,
some in between, a fifth near 1, as SWE-smith's 17,906 attempts for 5,016 kept runs suggest),
and two teachers, a cheap weak one and a dear strong one. The simulation drives the scheduler's
own decision code: `factory.run.forecast.simulate` (what `--dry-run` forecasts with) plays
`factory.run.allocation.Allocator` over the scheduler's `breadth_first` units with 8 attempts out
at once, finishing in order of a random duration, so what it measures is what `factory run`
would decide. A kept row is an attempt that passed, up to the
cap of 3 per task (the keeper's count, with no duplicates in this population).

    fixed      6 attempts per task and teacher, every one made (no cap, no hopeless stop)
    adaptive   the defaults: early stop at the cap, hopeless teachers stop (Beta posterior)
    cascade    adaptive, and the dear teacher only after the cheap one failed a task twice

The last two lines compare the cascade (factory's allocation with tiers) with fixed fan-out.
"""

from __future__ import annotations

import argparse
import random
import sys

from factory.config import SamplingConfig
from factory.run.forecast import simulate

CAP = 3
TEACHERS = {  # label: (mean USD per attempt, pass rate as a share of the task's own)
    "cheap": (0.25, 0.6),
    "dear": (1.25, 1.0),
}


def population(n: int, rng: random.Random) -> dict[str, dict[str, float]]:
    """Task id -> teacher -> its pass rate on the task."""
    rates = {}
    for i in range(n):
        x = rng.random()
        p = rng.betavariate(0.3, 12) if x < 0.5 else rng.betavariate(2, 2) if x < 0.8 else rng.betavariate(10, 1)
        rates[f"task-{i:04d}"] = {teacher: p * share for teacher, (_, share) in TEACHERS.items()}
    return rates


def cost(teacher: str, rng: random.Random) -> float:
    return TEACHERS[teacher][0] * rng.lognormvariate(0, 0.3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rates = population(args.tasks, random.Random(args.seed))
    fixed = SamplingConfig(attempts_per_task=6, hopeless={"enabled": False})
    adaptive = SamplingConfig(attempts_per_task=6)
    cascade = SamplingConfig(attempts_per_task=6, tiers=[["cheap"], ["dear"]])
    runs = {name: simulate(rates, sampling, list(TEACHERS), CAP, cost, args.seed, in_flight=8, early_stop=name != "fixed")
            for name, sampling in (("fixed", fixed), ("adaptive", adaptive), ("cascade", cascade))}
    near0 = sum(r["dear"] < 0.05 for r in rates.values()) / len(rates)
    print(f"cost bench: {args.tasks} simulated tasks ({near0:.0%} with a pass rate under 5%), teachers "
          + ", ".join(f"{t} ${c:.2f}/attempt x{s:g} pass rate" for t, (c, s) in TEACHERS.items()))
    print(f"  {'allocation':10} {'attempts':>9} {'dollars':>10} {'kept':>6} {'att/kept':>9} {'$/kept':>8}  saved")
    for name, r in runs.items():
        saved = ", ".join(f"{k} {v}" for k, v in sorted(r.saved.items())) or "-"
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
