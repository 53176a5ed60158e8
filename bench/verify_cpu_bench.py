"""CPU of one verification inside its container, step by step, on the peer bench's tasks.

The three SWE-smith-layout tasks of bench/peer_bench.py (tests/swesmith_layout.py), each one's
gold fix verified `--rounds` times by `DockerVerifier` (no reuse). The verifier's sandboxes are
wrapped so that the container's cgroup CPU (`cpuacct.usage`, or `cpu.stat` on cgroup v2) is read
before and after each of its steps: what the container spent until the start state's exec began
is its start (the command server's included), then each upload and exec by what it does, then
the whole container. Beside it, factory's own process (`getrusage`) per verification.

`--inside`: after the test run, the same container (the repo locked, the controls in place) runs
parts of that run alone, each `--repeat` times, measured by the same cgroup: the interpreter's
start, `import pytest`, the plugin's load, pytest on the run's ids with and without the plugin,
and the runner whole. The shares are what to read: the engine is shared and the machine busy.

    .venv/bin/python bench/verify_cpu_bench.py [--rounds 4] [--inside] [--repeat 5] [--share]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import shlex
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT))  # the image builder lives with the tests

from factory.config import VerifierConfig  # noqa: E402
from factory.sandbox.docker.engine import remove_containers  # noqa: E402
from factory.tasks import load_taskset  # noqa: E402
from factory.verify import DockerVerifier  # noqa: E402
from factory.verify.frameworks.base import PRIVATE, TEST_UID, TRUSTED  # noqa: E402
from tests.swesmith_layout import ensure_image, write_taskset  # noqa: E402

RUN_ID = "verify-cpu-bench"
STEPS = (  # (what an exec does, a word only its command holds), first match wins
    ("test run", "runner.py"),
    ("interpreter probe (once per image)", "sys.path"),
    ("files outside the repo (once per image)", "-name objects"),
    ("apply + readback", "factory-classes"),
    ("git's listing of the patch", "diff"),
)


def cgroup_file(container_id: str) -> Path:
    """The container's CPU accounting file: cgroup v1 (cgroupfs) or v2 (either driver)."""
    for pattern in (f"cpuacct/docker/{container_id}/cpuacct.usage", f"docker/{container_id}/cpu.stat",
                    f"system.slice/docker-{container_id}.scope/cpu.stat"):
        path = Path("/sys/fs/cgroup") / pattern
        if path.exists():
            return path
    raise FileNotFoundError(f"no cgroup CPU file for container {container_id}")


def cpu_seconds(path: Path) -> float:
    text = path.read_text()
    if path.name == "cpuacct.usage":
        return int(text) / 1e9
    return next(int(line.split()[1]) for line in text.splitlines() if line.startswith("usage_usec")) / 1e6


def step_of(command: str) -> str:
    return next((name for name, word in STEPS if word in command), f"other exec: {command[:40]!r}")


class MeteredSandbox:
    """A sandbox whose container's CPU is read around each step (`spent`: step -> seconds)."""

    def __init__(self, sandbox, spent: dict[str, float], inside: int = 0) -> None:
        self._sandbox, self.spent, self._inside = sandbox, spent, inside
        self._cgroup = cgroup_file(sandbox.container.id)
        self._last = 0.0

    def __getattr__(self, name: str):
        return getattr(self._sandbox, name)

    def _note(self, step: str) -> None:
        now = cpu_seconds(self._cgroup)
        self.spent[step] += now - self._last
        self._last = now

    async def prepare(self, *args, **kwargs):
        self._note("container start (the command server's too)")
        result = await self._sandbox.prepare(*args, **kwargs)
        self._note("start state (prepare)")
        return result

    async def write_files(self, files, **kwargs):
        self._note("between steps")
        await self._sandbox.write_files(files, **kwargs)
        self._note(f"upload of {len(files)} file(s)")

    async def exec(self, command: str, *args, **kwargs):
        self._note("between steps")
        result = await self._sandbox.exec(command, *args, **kwargs)
        step = step_of(command)
        self._note(step)
        if step == "test run" and self._inside:
            await inside(self._sandbox, self._cgroup, self._inside, self.spent)
            self._last = cpu_seconds(self._cgroup)
        return result

    async def close(self) -> None:
        self._note("between steps")
        await self._sandbox.close()


class MeteredBackend:
    def __init__(self, backend, inside: int) -> None:
        self._backend, self._inside = backend, inside
        self.verifications: list[dict[str, float]] = []

    def __getattr__(self, name: str):
        return getattr(self._backend, name)

    async def create(self, *args, **kwargs):
        spent: dict[str, float] = defaultdict(float)
        self.verifications.append(spent)
        return MeteredSandbox(await self._backend.create(*args, **kwargs), spent, self._inside)


def parts(workdir: str) -> dict[str, str]:
    """Parts of the test run, each a root shell command run alone in the container after it (the
    test-run environment of runner.py, the plugin reporting to /dev/null)."""
    ids = f"$(python3 -c 'import json; print(\" \".join(json.load(open(\"{TRUSTED}/args.json\"))))')"
    env = (f"env -i PATH=$PATH HOME=/tmp/factory-home LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 "
           f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 FACTORY_REPORT_FD=9 FACTORY_TOUCHED=[] FACTORY_WORKDIR={workdir}")
    as_test = f"setpriv --reuid {TEST_UID} --regid {TEST_UID} --clear-groups {env}"
    boot = (f"import json, sys; sys.path.insert(0, '{TRUSTED}'); import factory_pytest_plugin as p; import pytest; "
            f"sys.exit(pytest.main(json.load(open('{TRUSTED}/args.json')), plugins=[p]))")
    return {
        "python3 -I -S -c pass": f"{as_test} python3 -I -S -c pass",
        "python3 -I -c pass": f"{as_test} python3 -I -c pass",
        "python3 -I -c 'import pytest'": f"{as_test} python3 -I -c 'import pytest'",
        "+ the plugin's load": f"{as_test} python3 -I -c \"import sys; sys.path.insert(0, '{TRUSTED}'); "
                               f"import factory_pytest_plugin\" 9>/dev/null",
        "pytest with the plugin (runner's args)": f"{as_test} python3 -I -c {shlex.quote(boot)} 9>/dev/null >/dev/null",
        "pytest alone, -rA, same ids": f"{as_test} python3 -I -m pytest -p no:cacheprovider -q -rA {ids} >/dev/null",
        "runner.py whole": f"python3 -I -S {TRUSTED}/runner.py {PRIVATE}/job.json >/dev/null",
    }


async def inside(sandbox, cgroup: Path, repeat: int, spent: dict[str, float]) -> None:
    """Each part of the test run alone, `repeat` times interleaved; medians into `spent`."""
    samples: dict[str, list[float]] = defaultdict(list)
    for _ in range(repeat):
        for name, command in parts(sandbox.workdir).items():
            before = cpu_seconds(cgroup)
            result = await sandbox.exec(f"cd {shlex.quote(sandbox.workdir)} && {command}", timeout=300, user="root")
            samples[name].append(cpu_seconds(cgroup) - before)
            if result.exit_code not in (0, 1):  # pytest's 1: a control failed, as controls do
                raise RuntimeError(f"{name}: exit {result.exit_code}: {result.output[-500:]}")
    for name, values in samples.items():
        spent[f"inside: {name}"] = statistics.median(values)


def own_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


async def main(rounds: int, repeat: int | None, share: bool = False) -> int:
    image = ensure_image()
    with tempfile.TemporaryDirectory() as tmp:
        tasks = load_taskset(str(write_taskset(Path(tmp) / "taskset", image))).tasks
    verifier = DockerVerifier(VerifierConfig(), run_id=RUN_ID, share=share)
    backend = verifier.backend = MeteredBackend(verifier.backend, repeat or 0)
    process, problems = [], []
    try:
        for round_ in range(rounds + 1):  # round 0 warms up: start images, the per-image probes
            for task in tasks:
                before = own_cpu()
                verdict = await verifier.verify(task, task.gold_patch)
                if round_:
                    process.append(own_cpu() - before)
                if not verdict.resolved:
                    problems.append(f"{task.instance_id}: {verdict.reason} {verdict.detail}")
    finally:
        remove_containers(run_id=RUN_ID)  # and its task images
    measured = backend.verifications[len(tasks):]
    steps = list(dict.fromkeys(step for spent in measured for step in spent))
    print(f"CPU of one verification (gold fixes of {len(tasks)} SWE-smith-layout tasks x {rounds} rounds, {image}): "
          "median, min, max of the container's cgroup, seconds")
    for step in steps:
        values = [spent.get(step, 0.0) for spent in measured]
        if step.startswith("inside") and not values[0]:
            continue
        print(f"  {step:<48} {statistics.median(values):7.3f} {min(values):7.3f} {max(values):7.3f}")
    totals = [sum(v for k, v in spent.items() if not k.startswith("inside")) for spent in measured]
    print(f"  {'container, whole':<48} {statistics.median(totals):7.3f} {min(totals):7.3f} {max(totals):7.3f}")
    print(f"  {'factory process (getrusage)':<48} {statistics.median(process):7.3f} {min(process):7.3f} {max(process):7.3f}")
    for why in problems:
        print(f"  not resolved: {why}")
    return 1 if problems else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--share", action="store_true",
                        help="start each task's containers from its task image, as a run does (docs/sandbox.md)")
    parser.add_argument("--inside", action="store_true", help="also run the test run's parts alone in each container")
    parser.add_argument("--repeat", type=int, default=5, help="times each part runs, with --inside")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.rounds, args.repeat if args.inside else None, args.share)))
