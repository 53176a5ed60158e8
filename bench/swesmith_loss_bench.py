"""Attempts lost per 1,000 on a SWE-smith-layout image, at 16 and 64 in flight.

The image (tests/swesmith_layout.py: root only, bytecode on, a conda env, built from the base
image without a registry) is what real SWE-smith images look like to the sandbox. The scripted
teacher solves every task (solve: 1.0), so every attempt should end verified. An attempt is
lost when it has no file, no verdict, an infrastructure error class, infrastructure retries,
or a verification that infrastructure failed (reason `sandbox_error`); the baseline is 0.
Each setting is one `factory run` (run_pipeline: real sandboxes, verifier and warehouse) of at
least `--min-attempts` attempts and two waves of the in-flight limit.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT))  # the image builder lives with the tests

from factory.config import load_pipeline  # noqa: E402
from factory.records import Attempt, Reason  # noqa: E402
from factory.run.progress import QuietProgress  # noqa: E402
from factory.run.runner import run_pipeline  # noqa: E402
from factory.sandbox.docker.engine import remove_containers  # noqa: E402
from tests.swesmith_layout import ensure_image, scripted_solver, write_pipeline, write_taskset  # noqa: E402


def lost_reason(attempt: Attempt) -> str | None:
    """Why an attempt counts as lost to infrastructure; None when it has an honest verdict."""
    if attempt.error_class:
        return f"error_class {attempt.error_class}"
    if attempt.infra_failures:
        return f"infra retried: {attempt.infra_failures[0]}"
    if attempt.verdict is None:
        return f"no verdict (exit {attempt.trajectory.exit if attempt.trajectory else None})"
    if attempt.verdict.reason == Reason.sandbox_error:
        return f"verify infra: {attempt.verdict.detail}"
    return None


async def measure(taskset: Path, tasks: int, in_flight: int, min_attempts: int, latency: float):
    per_task = -(-max(min_attempts, 2 * in_flight) // tasks)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_pipeline(Path(tmp), taskset, scripted_solver(latency), attempts=per_task, in_flight=in_flight)
        run_id = f"swesmith-loss-{in_flight}-{int(time.time())}"
        started = time.perf_counter()
        try:
            outcome = await run_pipeline(load_pipeline(path), run_id=run_id, progress=QuietProgress(), command="bench")
        finally:
            remove_containers(run_id=run_id, everything=True)
        wall = time.perf_counter() - started
        attempts = outcome.store.attempts()
    expected = tasks * per_task
    reasons = Counter(r for a in attempts if (r := lost_reason(a)))
    if len(attempts) < expected:
        reasons["never recorded"] = expected - len(attempts)
    lost = sum(reasons.values())
    resolved = sum(1 for a in attempts if a.verdict and a.verdict.resolved)
    unresolved = Counter(f"{a.verdict.reason}: {a.verdict.detail}" for a in attempts
                         if a.verdict and not a.verdict.resolved and not lost_reason(a))
    return expected, lost, resolved, wall, reasons, unresolved


async def main(levels: list[int], min_attempts: int, latency: float) -> int:
    image = ensure_image()
    with tempfile.TemporaryDirectory() as tmp:
        taskset = write_taskset(Path(tmp) / "taskset", image)
        tasks = len((taskset / "tasks.jsonl").read_text().splitlines())
        print(f"attempts lost per 1,000 on a SWE-smith-layout image ({image}; scripted teacher, solve 1.0,"
              f" {latency:.2f} s per turn, real sandboxes and verifier; baseline 0)")
        print(f"  {'in flight':>9} {'attempts':>9} {'lost':>5} {'per 1,000':>10} {'resolved':>9} {'wall s':>7}")
        details = []
        for level in levels:
            n, lost, resolved, wall, reasons, unresolved = await measure(taskset, tasks, level, min_attempts, latency)
            print(f"  {level:9d} {n:9d} {lost:5d} {1000 * lost / n:10.1f} {resolved:9d} {wall:7.1f}")
            details += [f"    at {level}, lost: {count}x {why[:300]}" for why, count in reasons.most_common(5)]
            # every task is solved: a verdict that says otherwise is a bug worth seeing here too
            details += [f"    at {level}, unresolved: {count}x {why[:300]}" for why, count in unresolved.most_common(3)]
        if details:
            print("  most common reasons:")
            print("\n".join(details))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", default="16,64", help="in-flight limits to measure")
    parser.add_argument("--min-attempts", type=int, default=64, help="attempts per setting, at least")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per scripted turn")
    args = parser.parse_args()
    sys.exit(asyncio.run(main([int(x) for x in args.levels.split(",")], args.min_attempts, args.latency)))
