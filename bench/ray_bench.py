"""The Ray executor against the local one: overhead per attempt, and throughput on one node vs two.

Scripted teacher (the agent gives up after a few turns, so nothing is verified), real sandboxes.
Overhead: attempts one at a time, the same units under both executors; the difference in wall
time per attempt is what Ray adds (task dispatch, a teacher call's round trip to the gateway
per turn, a fresh pool per attempt on the node). Throughput: a cluster on loopback with one
node, then with two, each holding `--per-node` sandboxes. On this machine both nodes share 2
cores and one Docker engine, so the second node adds slots, not machines.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT))  # the loopback cluster of the tests

from factory.config import Pipeline  # noqa: E402
from factory.executor.cluster import RayExecutor  # noqa: E402
from factory.executor.local import LocalExecutor  # noqa: E402
from factory.run.folder import RunStore  # noqa: E402
from factory.run.parts import executor_site, plan_of  # noqa: E402
from factory.run.progress import QuietProgress  # noqa: E402
from factory.run.scheduler import Scheduler  # noqa: E402
from factory.sandbox.docker.engine import remove_containers  # noqa: E402
from factory.sandbox.images import ensure_images  # noqa: E402
from factory.sandbox.pool import SandboxPool  # noqa: E402
from factory.tasks import load_taskset  # noqa: E402
from factory.teachers import build_teacher  # noqa: E402
from factory.verify import DockerVerifier  # noqa: E402
from tests.executor.ray_cluster import Cluster  # noqa: E402

DEMO = ROOT / "pipelines/tasksets/demo"


def pipeline(attempts: int, in_flight: int, latency: float, address: str | None) -> Pipeline:
    return Pipeline.model_validate({
        "name": "bench",
        "tasks": {"source": str(DEMO)},
        "teachers": [{"kind": "scripted", "model": "scripted-bench",
                      "profile": {"solve": 0, "wrong_fix": 0, "loop": 0, "format_error": 0,
                                  "give_up": 1.0, "latency_seconds": latency}}],
        "sandbox": {"memory": "256m", "max_live": in_flight + 2, "warm": 0, "create_rate": 100},
        "sampling": {"attempts_per_task": 1, "max_in_flight": in_flight},
        "filters": {"cap": {"enabled": False}},
        "executor": {"kind": "ray", "address": address} if address else {},
    })


async def measure(p: Pipeline, tasks: list, run_id: str) -> tuple[float, int]:
    teachers = {"scripted-bench": build_teacher(p.teachers[0])}
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / run_id)
        store.start("", "bench", "bench")
        if p.executor.kind == "ray":
            executor, _ = await RayExecutor.start(executor_site(p, store, tasks, teachers, set(), QuietProgress()))
        else:
            pool = SandboxPool(p.sandbox, run_id=run_id)
            executor = LocalExecutor(pool, DockerVerifier(), teachers, p.agent)
        try:
            started = time.perf_counter()
            result = await Scheduler(plan_of(p), tasks, teachers, store, progress=QuietProgress(), executor=executor).run()
            wall = time.perf_counter() - started
        finally:
            await (executor.close() if p.executor.kind == "ray" else pool.close())
    remove_containers(run_id=run_id, everything=True)
    return wall, len(result.attempts)


async def main(attempts: int, per_node: int, latency: float) -> None:
    tasks = load_taskset(str(DEMO)).tasks
    ensure_images(tasks, DEMO)
    serial = tasks[:attempts]
    cluster = Cluster()
    try:
        cluster.add_node(per_node, head=True)
        local = ray = 0.0
        n = 0
        for _ in range(2):  # alternated, so that neither gets the engine's warm-up or a quiet minute alone
            wall, count = await measure(pipeline(1, 1, 0.0, None), serial, "bench-local")
            local, n = local + wall, n + count
            ray += (await measure(pipeline(1, 1, 0.0, cluster.address), serial, "bench-ray"))[0]
        print(f"ray executor overhead (scripted teacher, {n} attempts one at a time per executor, real sandboxes)")
        print(f"  local {local / n:6.2f} s/attempt   ray {ray / n:6.2f} s/attempt   overhead {(ray - local) / n:+.2f} s "
              f"({ray / local:.2f}x)")
        wide = tasks[: 4 * per_node]
        one, a = await measure(pipeline(1, 2 * per_node, latency, cluster.address), wide, "bench-one")
        cluster.add_node(per_node)
        two, b = await measure(pipeline(1, 2 * per_node, latency, cluster.address), wide, "bench-two")
        print(f"ray throughput ({len(wide)} attempts, {latency:g} s per turn, {2 * per_node} in flight, "
              f"{per_node} sandboxes per node, both nodes on this machine)")
        print(f"  1 node {a / one:6.2f} attempts/s   2 nodes {b / two:6.2f} attempts/s   ratio {(b / two) / (a / one):.2f}")
    finally:
        cluster.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attempts", type=int, default=6, help="attempts of the overhead measurement")
    parser.add_argument("--per-node", type=int, default=3, help="sandboxes each node holds")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per scripted turn (throughput)")
    args = parser.parse_args()
    asyncio.run(main(args.attempts, args.per_node, args.latency))
