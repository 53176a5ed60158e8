"""Verification time per task: factory's verifier beside a naive SWE-bench-style grader, same run.

    naive     a container from the task's image, the start state applied, the gold patch
              applied with `git apply`, pytest on FAIL_TO_PASS + PASS_TO_PASS with -rA, and
              the `PASSED <id>` lines parsed from its output (what a first grader does)
    factory   DockerVerifier.verify(task, gold patch): diff policy, fresh container, read-only
              repo, controls, trusted runner, grading

Both grade the gold fix of the same demo tasks, alternating, `--rounds` times; the ratio of
medians is the verifier's overhead (goal: at most 1.5).
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import statistics
import sys
import time
from pathlib import Path

import docker

sys.path.insert(0, str(Path(__file__).parent.parent))

from factory.config import VerifierConfig  # noqa: E402
from factory.records import Task  # noqa: E402
from factory.sandbox import engine  # noqa: E402
from factory.sandbox.images import ensure_images  # noqa: E402
from factory.tasks import load_taskset  # noqa: E402
from factory.verify import DockerVerifier  # noqa: E402

DEMO = Path(__file__).parent.parent / "pipelines/tasksets/demo"


def naive_grade(client: docker.DockerClient, task: Task, patch: str) -> bool:
    """Resolved when every FAIL_TO_PASS and PASS_TO_PASS id shows as PASSED in pytest's -rA output."""
    ids = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
    container = client.containers.run(task.image, ["sleep", "600"], detach=True, network_mode="none",
                                      labels=engine.labels("verify-bench", "naive"))
    try:
        for name, diff in (("start", task.start.bug_patch), ("fix", patch), ("tests", task.test_patch)):
            if diff:
                container.put_archive("/tmp", _tar(f"{name}.patch", diff.encode()))
                code, out = container.exec_run(["git", "apply", f"/tmp/{name}.patch"], workdir=task.workdir)
                if code:
                    return False
        prefix = f"{task.test_cmd}; " if task.test_cmd else ""
        _, out = container.exec_run(["bash", "-c", f"{prefix}python -m pytest -rA -p no:cacheprovider "
                                     + " ".join(map(shlex.quote, ids))], workdir=task.workdir)
        passed = {line.split(" ", 1)[1].strip() for line in out.decode(errors="replace").splitlines()
                  if line.startswith("PASSED ")}
        return all(i in passed for i in ids)
    finally:
        container.remove(force=True)


def _tar(name: str, data: bytes) -> bytes:
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


async def main(rounds: int, tasks: int) -> int:
    chosen = load_taskset(str(DEMO)).tasks[:tasks]
    ensure_images(chosen, DEMO)
    client = docker.from_env()
    verifier = DockerVerifier(VerifierConfig(), run_id="verify-bench")
    naive, ours = [], []
    for _ in range(rounds):
        for task in chosen:
            t = time.perf_counter()
            naive_ok = await asyncio.to_thread(naive_grade, client, task, task.gold_patch)
            naive.append(time.perf_counter() - t)
            t = time.perf_counter()
            verdict = await verifier.verify(task, task.gold_patch)
            ours.append(time.perf_counter() - t)
            if not (naive_ok and verdict.resolved):
                print(f"  {task.instance_id}: naive {naive_ok}, factory {verdict.reason} {verdict.detail}")
    n, o = statistics.median(naive), statistics.median(ours)
    print(f"verification per task (gold fix, {len(chosen)} demo tasks x {rounds}; baseline: naive grader)")
    print(f"  naive grader   {n * 1000:8.0f} ms")
    print(f"  factory        {o * 1000:8.0f} ms   ratio {o / n:.2f} (goal <= 1.5)")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=4)
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.rounds, args.tasks)))
