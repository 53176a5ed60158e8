"""Orchestration efficiency: achieved attempts per second divided by the ideal.

The scripted teacher sleeps a fixed latency per turn, so an attempt's intrinsic duration is
turns x latency; with C attempts in flight the ideal throughput is C / that duration. The
ratio shows what sandboxes, tools and the scheduler cost on top, at concurrency 16, 64, 256,
with real Docker sandboxes (the scripted agent gives up, so no verification runs).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from factory.config import Pipeline
from factory.executor.local import LocalExecutor
from factory.run.folder import RunStore
from factory.run.parts import plan_of
from factory.run.progress import QuietProgress
from factory.run.scheduler import Scheduler
from factory.sandbox.docker.engine import remove_containers
from factory.sandbox.images import ensure_images
from factory.sandbox.pool import SandboxPool
from factory.tasks import load_taskset
from factory.teachers import build_teacher
from factory.verify import DockerVerifier

DEMO = Path(__file__).parent.parent / "pipelines/tasksets/demo"


async def measure(concurrency: int, latency: float, waves: int) -> tuple[float, float, int]:
    tasks = load_taskset(str(DEMO)).tasks
    per_task = -(-concurrency * waves // len(tasks))
    pipeline = Pipeline.model_validate({
        "name": "bench",
        "tasks": {"source": str(DEMO)},
        "teachers": [{"kind": "scripted", "model": "scripted-bench",
                      "profile": {"solve": 0, "wrong_fix": 0, "loop": 0, "format_error": 0,
                                  "give_up": 1.0, "latency_seconds": latency}}],
        "sandbox": {"memory": "256m", "max_live": concurrency + 8, "warm": 0, "create_rate": 100},
        "sampling": {"attempts_per_task": per_task, "max_in_flight": concurrency},
        "filters": {"cap": {"enabled": False}},  # every attempt is made
    })
    teacher = build_teacher(pipeline.teachers[0])
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / f"bench-{concurrency}")
        store.start("", "bench", "bench")
        async with SandboxPool(pipeline.sandbox, run_id=store.run_id) as pool:
            teachers = {"scripted-bench": teacher}
            scheduler = Scheduler(plan_of(pipeline), tasks, teachers, store, progress=QuietProgress(),
                                  executor=LocalExecutor(pool, DockerVerifier(), teachers, pipeline.agent))
            started = time.perf_counter()
            result = await scheduler.run()
            wall = time.perf_counter() - started
    turns = [len(a.trajectory.turns) for a in result.attempts if a.trajectory]
    intrinsic = statistics.mean(turns) * latency
    achieved = len(result.attempts) / wall
    ideal = concurrency / intrinsic
    return achieved, ideal, len(result.attempts)


async def main(levels: list[int], latency: float, waves: int) -> None:
    ensure_images(load_taskset(str(DEMO)).tasks, DEMO)
    print(f"orchestration efficiency (scripted teacher, {latency:.1f} s per turn, real sandboxes)")
    print(f"  {'concurrency':>11} {'attempts':>9} {'achieved/s':>11} {'ideal/s':>9} {'efficiency':>11}")
    for c in levels:
        achieved, ideal, n = await measure(c, latency, waves)
        print(f"  {c:11d} {n:9d} {achieved:11.2f} {ideal:9.2f} {achieved / ideal:11.2f}")
        remove_containers(run_id=f"bench-{c}", everything=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", default="16,64,256")
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per scripted turn")
    parser.add_argument("--waves", type=int, default=2, help="attempts per slot")
    args = parser.parse_args()
    asyncio.run(main([int(x) for x in args.levels.split(",")], args.latency, args.waves))
