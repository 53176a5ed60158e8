"""Verification time per task and test framework: factory's verifier beside a naive grader of the
same framework, same run.

    naive pytest   a container from the task's image, the start state applied, the gold patch
                   applied with `git apply`, pytest on FAIL_TO_PASS + PASS_TO_PASS with -rA, and
                   the `PASSED <id>` lines parsed from its output (what a first grader does)
    naive command  a container from the task's image, the start state and the gold patch applied
                   with `git apply`, the task's `tests.command` run as the image's user with
                   REPORT_DIR set (as the command framework sets it), its report (the file in
                   REPORT_DIR, or the output) read by the task's result reader and graded by
                   `factory.verify.results.grade`
    factory        DockerVerifier.verify(task, gold patch): diff policy, fresh container, read-only
                   repo, the framework's run (pytest: controls, trusted runner; command: the tests'
                   own user, scratch folder, every process killed after), grading

Per language (the demo task sets: Python, Go, JavaScript, Java, Rust), both grade the gold fix of
the same tasks, alternating, `--rounds` times, the naive grader's containers under the verifier's
limits (memory, CPUs, processes; `--naive-uncapped`: none); the ratio of medians is the
verifier's overhead over its framework's naive grader (goal: at most 1.5). The figures are
printed, as every bench's are, and kept in docs/verify.md.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import shlex
import statistics
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import docker

sys.path.insert(0, str(Path(__file__).parent.parent))

from factory.config import VerifierConfig  # noqa: E402
from factory.errors import UsageError  # noqa: E402
from factory.records import Task  # noqa: E402
from factory.sandbox.docker import engine  # noqa: E402
from factory.sandbox.images import ensure_images  # noqa: E402
from factory.tasks import load_taskset  # noqa: E402
from factory.verify import DockerVerifier  # noqa: E402
from factory.verify import results as readers  # noqa: E402

TASKSETS = Path(__file__).parent.parent / "pipelines/tasksets"
LANGUAGES = {"python": "demo", "go": "demo-go", "js": "demo-js", "java": "demo-java", "rust": "demo-rust"}
"""Language -> its demo task set under pipelines/tasksets."""
NAIVE_REPORT_DIR = "/tmp/naive-report"
GOAL = 1.5


@dataclass
class Figures:
    """One language's samples: seconds per verification, each side, and where they disagreed."""

    language: str
    framework: str
    tasks: int
    rounds: int
    naive: list[float] = field(default_factory=list)
    factory: list[float] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    """What each side said, for every sample where either did not resolve the gold fix."""

    @property
    def naive_ms(self) -> float:
        return statistics.median(self.naive) * 1000

    @property
    def factory_ms(self) -> float:
        return statistics.median(self.factory) * 1000

    @property
    def ratio(self) -> float:
        return self.factory_ms / self.naive_ms


@dataclass(frozen=True)
class Naive:
    resolved: bool
    detail: str = ""
    """Why not, when not resolved."""


def verifier_limits(verifier: DockerVerifier) -> dict:
    """The verifier's container limits (memory, CPUs, processes) as docker-py's arguments: given to
    the naive grader's containers, both sides run on the same share of the machine, and the ratio
    is the verification's own work, not the CPU quota (1 CPU by default; Go's and Java's
    compilers use every core they get)."""
    box, memory = verifier.sandbox_config, verifier.config.memory
    return {"mem_limit": memory, "memswap_limit": memory, "nano_cpus": int(box.cpus * 1e9), "pids_limit": box.pids_limit}


def naive_grade(client: docker.DockerClient, task: Task, patch: str, limits: dict | None = None) -> Naive:
    """The task's framework graded the way a first grader would: apply, run, read; `limits`:
    docker-py's resource arguments of its container (none: the whole machine)."""
    container = client.containers.run(task.image, ["sleep", "600"], detach=True, network_mode="none",
                                      labels=engine.labels("verify-bench", "naive"), **(limits or {}))
    try:
        for name, diff in (("start", task.start.bug_patch), ("fix", patch), ("tests", task.test_patch)):
            if diff:
                container.put_archive("/tmp", _tar(f"{name}.patch", diff.encode()))
                code, out = container.exec_run(["git", "apply", f"/tmp/{name}.patch"], workdir=task.workdir)
                if code:
                    return Naive(False, f"the {name} patch does not apply: {out.decode(errors='replace')[-300:]}")
        if task.tests.framework == "pytest":
            return _naive_pytest(container, task)
        return _naive_command(container, task)
    finally:
        container.remove(force=True)


def _naive_pytest(container, task: Task) -> Naive:
    """Resolved when every FAIL_TO_PASS and PASS_TO_PASS id shows as PASSED in pytest's -rA output."""
    ids = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
    prefix = f"{task.test_cmd}; " if task.test_cmd else ""
    _, out = container.exec_run(["bash", "-c", f"{prefix}python -m pytest -rA -p no:cacheprovider "
                                 + " ".join(map(shlex.quote, ids))], workdir=task.workdir)
    passed = {line.split(" ", 1)[1].strip() for line in out.decode(errors="replace").splitlines()
              if line.startswith("PASSED ")}
    missing = [i for i in ids if i not in passed]
    return Naive(not missing, f"not PASSED: {', '.join(missing[:5])}" if missing else "")


def _naive_command(container, task: Task) -> Naive:
    """The task's command with REPORT_DIR set, its report read by the task's reader and graded."""
    spec = task.tests
    # one stream, as the command framework has it: the engine keeps no order between stdout and stderr
    code, out = container.exec_run(
        ["sh", "-c", f"mkdir -p {NAIVE_REPORT_DIR} && exec sh -c \"$0\" 2>&1", spec.command],
        workdir=task.workdir, environment={"REPORT_DIR": NAIVE_REPORT_DIR})
    if spec.report:
        _, out = container.exec_run(["cat", f"{NAIVE_REPORT_DIR}/{spec.report}"])
    graded = readers.grade(task.FAIL_TO_PASS, task.PASS_TO_PASS, readers.read(spec.results, out, exit_code=code))
    why = [f"not passed: {', '.join(graded.failing[:5])}"] if graded.failing else []
    why += [f"{p.code.value}: {p.detail}" for p in graded.problems[:3]]
    return Naive(graded.passed, "" if graded.passed else "; ".join([f"exit {code}", *why]))


def _tar(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def demo_tasks(language: str, tasks: int) -> list[Task]:
    """The first `tasks` tasks of the language's demo task set, their images built if missing."""
    folder = TASKSETS / LANGUAGES[language]
    chosen = load_taskset(str(folder)).tasks[:tasks]
    ensure_images(chosen, folder)
    return chosen


async def measure(language: str, rounds: int, tasks: int, client: docker.DockerClient,
                  verifier: DockerVerifier, *, capped: bool = True) -> Figures:
    """Both graders on the gold fix of the language's first `tasks` demo tasks, alternating,
    `rounds` times; `capped`: the naive grader's containers get the verifier's limits."""
    limits = verifier_limits(verifier) if capped else None
    chosen = demo_tasks(language, tasks)
    figures = Figures(language, chosen[0].tests.framework, len(chosen), rounds)
    for _ in range(rounds):
        for task in chosen:
            t = time.perf_counter()
            naive = await asyncio.to_thread(naive_grade, client, task, task.gold_patch, limits)
            figures.naive.append(time.perf_counter() - t)
            t = time.perf_counter()
            verdict = await verifier.verify(task, task.gold_patch)
            figures.factory.append(time.perf_counter() - t)
            if not (naive.resolved and verdict.resolved):
                figures.unresolved.append(f"{task.instance_id}: naive {naive.resolved} {naive.detail}, "
                                          f"factory {verdict.resolved} {verdict.reason} {verdict.detail}")
    return figures


def table(all_figures: list[Figures], capped: bool = True) -> str:
    naive = "with the verifier's container limits" if capped else "with the whole machine"
    lines = [f"verification per task (gold fix; baseline: a naive grader of the same framework, {naive}; medians)",
             f"  {'language':<9}{'framework':<11}{'tasks x rounds':>15}{'naive ms':>10}{'factory ms':>12}{'ratio':>7}"]
    for f in all_figures:
        over = "" if f.ratio <= GOAL else f"  above the goal ({GOAL})"
        lines.append(f"  {f.language:<9}{f.framework:<11}{f'{f.tasks} x {f.rounds}':>15}{f.naive_ms:>10.0f}"
                     f"{f.factory_ms:>12.0f}{f.ratio:>7.2f}{over}")
        lines += [f"    not resolved: {u}" for u in f.unresolved]
    lines.append(f"  goal: ratio <= {GOAL}")
    return "\n".join(lines)


async def main(languages: list[str], rounds: int, tasks: int, capped: bool) -> int:
    client = docker.from_env()
    verifier = DockerVerifier(VerifierConfig(), run_id="verify-bench")  # no reuse: every round verifies afresh
    print(f"verify bench: {os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at start")
    all_figures, missing = [], []
    for language in languages:
        try:
            all_figures.append(await measure(language, rounds, tasks, client, verifier, capped=capped))
        except UsageError as exc:  # a toolchain image not built: the other languages are still measured
            missing.append(f"  {language}: not measured: {exc}")
    print("\n".join([table(all_figures, capped), *missing]))
    return 1 if missing or any(f.unresolved for f in all_figures) else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=4, help="tasks per language")
    parser.add_argument("--languages", default=",".join(LANGUAGES), help=f"comma-separated, of {', '.join(LANGUAGES)}")
    parser.add_argument("--naive-uncapped", action="store_true",
                        help="the naive grader's containers without the verifier's CPU and memory limits")
    args = parser.parse_args()
    unknown = set(args.languages.split(",")) - set(LANGUAGES)
    if unknown:
        parser.error(f"unknown language(s) {', '.join(sorted(unknown))}; valid: {', '.join(LANGUAGES)}")
    sys.exit(asyncio.run(main(args.languages.split(","), args.rounds, args.tasks, not args.naive_uncapped)))
