"""Sandbox latencies and density, each beside the raw docker SDK measured in the same run.

    start (cold)    DockerSandbox.create + prepare  vs  containers.run(sleep) raw
    start (warm)    SandboxPool.acquire from a prewarmed pool
    exec round trip DockerSandbox.exec('true')      vs  container.exec_run('true') raw
                    (through the command server, and with one exec per command as without it)
    in flight       execs per second with 32 sandboxes running `true` at once: through the
                    command server vs one exec per command (the baseline of that row)
    engine CPU      CPU seconds of dockerd, containerd and the containerd shims (runc included,
                    as the shims' children) per exec, for each of those
    idle density    idle sandboxes per GiB           vs  raw `sleep` containers per GiB
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import docker

from factory.config import SandboxConfig
from factory.records import StartState
from factory.sandbox.docker import DockerSandbox, engine
from factory.sandbox.pool import SandboxPool

IMAGE = "factory/python:3.11"


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


ENGINE = ("dockerd", "containerd", "containerd-shim")  # /proc/<pid>/comm (shims: cut at 15 chars)


def engine_ticks() -> dict[int, int]:
    """CPU clock ticks (user + system, waited-for children included) of each engine process."""
    ticks = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if (proc / "comm").read_text().strip() not in ENGINE:
                continue
            fields = (proc / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        ticks[int(proc.name)] = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return ticks


def ticks_between(before: dict[int, int], after: dict[int, int]) -> int:
    return sum(after[pid] - before[pid] for pid in before.keys() & after.keys())  # processes alive throughout


async def engine_cpu_ms(calls: int, one: Callable[[], Awaitable[object]]) -> float:
    """Engine CPU milliseconds per call of `one`, over `calls` calls, less what the engine spent in
    as long a time with nothing of ours running (other containers, other users); nan where this
    process cannot see the engine's processes."""
    tick = 1000 / os.sysconf("SC_CLK_TCK")
    before, t = engine_ticks(), time.perf_counter()
    for _ in range(calls):
        await one()
    after, elapsed = engine_ticks(), time.perf_counter() - t
    await asyncio.sleep(elapsed)
    background = ticks_between(after, engine_ticks())
    if not before:
        return float("nan")
    return max(0, ticks_between(before, after) - background) * tick / calls  # others' bursts can outweigh ours


async def in_flight(config: SandboxConfig, sandboxes: int, each: int) -> tuple[float, float]:
    """Execs per second with `sandboxes` running `each` commands at once: (server, one exec per command)."""
    config = config.model_copy(update={"max_live": sandboxes})
    boxes = await asyncio.gather(*(DockerSandbox.create(IMAGE, config, workdir="/tmp", run_id="bench")
                                   for _ in range(sandboxes)))

    async def run(sb: DockerSandbox) -> None:
        for _ in range(each):
            await sb.exec("true")

    rates = []
    try:
        for per_call in (False, True):
            for sb in boxes if per_call else ():
                sb._drop_server()
                sb.per_call = True
            t = time.perf_counter()
            await asyncio.gather(*(run(sb) for sb in boxes))
            rates.append(sandboxes * each / (time.perf_counter() - t))
    finally:
        await asyncio.gather(*(sb.close() for sb in boxes))
    return rates[0], rates[1]


def memory_bytes(container) -> int:
    stats = container.stats(stream=False)
    usage = stats["memory_stats"].get("usage", 0)
    cache = stats["memory_stats"].get("stats", {}).get("cache", 0) or stats["memory_stats"].get("stats", {}).get("inactive_file", 0)
    return max(usage - cache, 1)


async def main(n: int) -> None:
    raw = docker.from_env()
    config = SandboxConfig(max_live=n + 2, warm=n, create_rate=50)
    labels = engine.labels("bench", "raw")

    raw_start, ours_start = [], []
    for _ in range(n):
        t = time.perf_counter()
        c = raw.containers.run(IMAGE, ["sleep", "600"], detach=True, network_mode="none", labels=labels)
        raw_start.append(time.perf_counter() - t)
        c.remove(force=True)
        t = time.perf_counter()
        sb = await DockerSandbox.create(IMAGE, config, workdir="/tmp", run_id="bench")
        await sb.prepare(StartState())
        ours_start.append(time.perf_counter() - t)
        await sb.close()

    warm_start = []
    async with SandboxPool(config, run_id="bench") as pool:
        pool.prewarm(IMAGE, workdir="/tmp")
        while len(pool.warm[(IMAGE, "/tmp")]) < n:
            await asyncio.sleep(0.1)
        for i in range(n):
            t = time.perf_counter()
            await pool.acquire(IMAGE, StartState(), workdir="/tmp", attempt_id=f"w{i}")
            warm_start.append(time.perf_counter() - t)

    sb = await DockerSandbox.create(IMAGE, config, workdir="/tmp", run_id="bench")
    single = await DockerSandbox.create(IMAGE, config, workdir="/tmp", run_id="bench")
    single.per_call = True
    single._drop_server()
    c = raw.containers.run(IMAGE, ["sleep", "600"], detach=True, network_mode="none", labels=labels)
    raw_exec, ours_exec, per_call_exec = [], [], []
    for _ in range(n * 3):
        t = time.perf_counter()
        c.exec_run(["true"])
        raw_exec.append(time.perf_counter() - t)
        t = time.perf_counter()
        await sb.exec("true")
        ours_exec.append(time.perf_counter() - t)
        t = time.perf_counter()
        await single.exec("true")
        per_call_exec.append(time.perf_counter() - t)
    calls = n * 5
    raw_cpu = await engine_cpu_ms(calls, lambda: asyncio.to_thread(c.exec_run, ["true"]))
    ours_cpu = await engine_cpu_ms(calls, lambda: sb.exec("true"))
    per_call_cpu = await engine_cpu_ms(calls, lambda: single.exec("true"))
    ours_mem = memory_bytes(sb.container)
    raw_mem = memory_bytes(c)
    await sb.close()
    await single.close()
    c.remove(force=True)

    flight = await in_flight(config, 32, 10)
    gib = 1024**3
    rows = [
        ("start, cold (ms)", median_ms(ours_start), median_ms(raw_start)),
        ("start, warm pool (ms)", median_ms(warm_start), median_ms(raw_start)),
        ("exec round trip (ms)", median_ms(ours_exec), median_ms(raw_exec)),
        ("  one exec per command (ms)", median_ms(per_call_exec), median_ms(raw_exec)),
        ("execs/s, 32 in flight [1]", *flight),
        ("engine CPU per exec (ms)", ours_cpu, raw_cpu),
        ("  one exec per command (ms)", per_call_cpu, raw_cpu),
        ("idle sandboxes per GiB", gib / ours_mem, gib / raw_mem),
    ]
    print(f"sandbox bench ({n} samples; medians)")
    print(f"  {'metric':26} {'factory':>10} {'raw docker':>11} {'ratio':>7}")
    for name, ours, base in rows:
        print(f"  {name:26} {ours:10.1f} {base:11.1f} {ours / base if base else float('nan'):7.2f}")
    print("  [1] baseline: the same sandboxes with one exec per command")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=10, help="samples per measurement")
    asyncio.run(main(parser.parse_args().n))
