"""Environment validation: the gold fix must resolve a task and the empty patch must not.

A terminal task (Harbor) has no patch: its `solution/solve.sh` runs as root in a sandbox of the
task, that state is frozen and judged as an agent's would be, and must earn the reward; the
untouched start state must not. Its tests run offline, so a test script that downloads what it
needs is named, one line per task, with the line that downloads.

A teacher's dollar spent on a broken task is wasted, so a task set is checked before use.
With `repeat` > 1 the gold check runs several times and tasks whose results differ are
marked flaky. Results live in factory's cache, one file per task source (`results_path`),
so runs can skip bad tasks without factory ever writing into the source's folder.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from factory.errors import SandboxError, UsageError, VerifyError
from factory.protocols import SandboxBackend, Verifier
from factory.records import Task, Verdict
from factory.sandbox.played import state_after
from factory.tasks.config import local_path


@dataclass
class TaskCheck:
    instance_id: str
    status: str  # valid | broken | flaky | infra_error (the engine failed: says nothing of the task)
    why: str = ""
    gold: list[str] = field(default_factory=list)
    empty: str = ""
    seconds: float | None = None
    """The slowest verification of the gold fix: the basis of the task's verification timeout."""
    fails_at: dict[str, int] = field(default_factory=dict)
    """Where each FAIL_TO_PASS test failed under the empty patch (`Task.fails_at`)."""


def cache_dir() -> Path:
    """Factory's folder for validation results: `$XDG_CACHE_HOME/factory/validation`, by default
    `~/.cache/factory/validation` (a relative XDG_CACHE_HOME is ignored, as the XDG spec says)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "factory" / "validation"


def results_path(source: str, base: Path | None = None) -> Path:
    """The one place the validation results of a task source live, for the writer and every reader.

    A file in `cache_dir()` named by a readable stem and a digest of the resolved path (or the
    Hub id), so two sources never share a file and however a path is spelled it finds the same one.
    `base` is the folder a relative source is read from (a pipeline's), as in `load_tasks`."""
    local = local_path(source, base)
    if local is None:
        key, stem = f"hub:{source}", source.replace("/", "__")
    else:
        resolved = local.resolve()
        key, stem = str(resolved), resolved.name if resolved.is_dir() else resolved.stem
    readable = re.sub(r"[^\w.-]+", "_", stem) or "tasks"
    return cache_dir() / f"{readable}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def _legacy_path(source: str, base: Path | None) -> Path | None:
    """Where versions before the cache wrote results of a local source (beside it): read, never written."""
    local = local_path(source, base)
    if local is None:
        return None
    return local / "validation.json" if local.is_dir() else local.with_suffix(".validation.json")


def _describe(v: Verdict, size: int = 300) -> str:
    """A verdict in one short line: its reason, the start of its detail and its end, where test
    output names what failed (pytest's summary, `1 failed`), with the middle cut."""
    if v.resolved:
        return "resolved"
    text = f"{v.reason}: {v.detail}"
    return text if len(text) <= size else f"{text[:size // 3]} … {text[-(size - size // 3 - 3):]}"


async def check_task(verifier: Verifier, task: Task, repeat: int = 1, backend: SandboxBackend | None = None) -> TaskCheck:
    if task.terminal is not None:
        if backend is None:
            raise UsageError(f"{task.instance_id} is a terminal task: its validation needs a sandbox backend")
        return await _check_terminal(verifier, backend, task, repeat)
    try:
        golds = [await verifier.verify(task, task.gold_patch) for _ in range(repeat)]
        alts = [await verifier.verify(task, fix) for fix in task.alt_fixes]
        empty = await verifier.verify(task, "")
    except VerifyError as exc:
        return TaskCheck(task.instance_id, "infra_error", why=str(exc)[:300])
    check = TaskCheck(task.instance_id, "valid", gold=[_describe(v) for v in golds], empty=_describe(empty),
                      seconds=round(max(v.seconds for v in golds), 2), fails_at=empty.fails_at)
    outcomes = {v.resolved for v in golds}
    if len(outcomes) > 1:
        check.status, check.why = "flaky", "the gold fix resolved in some runs and not in others"
    elif not golds[0].resolved:
        check.status, check.why = "broken", f"gold fix does not resolve ({_describe(golds[0])})"
    elif any(not v.resolved for v in alts):
        i, v = next((i, v) for i, v in enumerate(alts) if not v.resolved)
        check.status, check.why = "broken", f"alt_fixes[{i}] does not resolve ({_describe(v)})"
    elif empty.resolved:
        check.status, check.why = "broken", "the empty patch resolves: FAIL_TO_PASS tests do not fail at the start"
    return check


DOWNLOADS = re.compile(r"\b(curl|wget|pip3?\s+install|uv\s+(pip\s+install|sync|add|run)|uvx|apt(-get)?\s+install"
                       r"|npm\s+(install|ci)|npx|git\s+clone)\b")
"""Commands of a test script that fetch from the network, which verification does not have."""
OFFLINE = re.compile(r"Could not resolve host|Temporary failure in name resolution|Name or service not known"
                     r"|Network is unreachable|Failed to establish a new connection|Could not resolve '")
"""What tools print when a download fails for want of a network."""


def downloads(task: Task, output: str) -> str:
    """Where `task`'s tests download at verify time: the first script line that fetches, else the
    network error its output shows; "" when neither."""
    assert task.terminal is not None
    for name, text in sorted(task.terminal.tests.items(), key=lambda kv: kv[0] != task.terminal.script):
        if name.endswith(".sh"):
            for number, line in enumerate(text.splitlines(), 1):
                if not line.lstrip().startswith("#") and DOWNLOADS.search(line):
                    return f"tests/{name}:{number} `{line.strip()[:120]}`"
    error = OFFLINE.search(output)
    return f"its output says {error.group(0)!r}" if error else ""


async def _check_terminal(verifier: Verifier, backend: SandboxBackend, task: Task, repeat: int) -> TaskCheck:
    """solve.sh's final state must earn the reward, the untouched one must not (`check_task`)."""
    assert task.terminal is not None
    solve = task.terminal.solution.get("solve.sh", "")
    run_id = getattr(verifier, "run_id", "validate")

    async def judged(script: str, name: str) -> tuple[Verdict, str]:
        played = await state_after(backend, task, script, run_id=run_id, attempt_id=f"{name}-{task.instance_id}"[:60])
        return await verifier.verify(task, "", played.state), played.failed

    try:
        golds = [await judged(solve, f"solve{i}") for i in range(repeat)] if solve else []
        empty, _ = await judged("", "empty")
    except (SandboxError, VerifyError) as exc:
        return TaskCheck(task.instance_id, "infra_error", why=str(exc)[:300])
    check = TaskCheck(task.instance_id, "valid", gold=[_describe(v) for v, _ in golds], empty=_describe(empty),
                      seconds=round(max(v.seconds for v, _ in golds), 2) if golds else None)
    outcomes = {v.resolved for v, _ in golds}
    if not solve:
        check.status, check.why = "broken", "no solution/solve.sh: nothing shows the task can be solved"
    elif len(outcomes) > 1:
        check.status, check.why = "flaky", "solve.sh earned the reward in some runs and not in others"
    elif not golds[0][0].resolved:
        verdict, failed = golds[0]
        fetching = downloads(task, verdict.detail)
        check.status, check.why = "broken", (
            f"its tests download at verify time, and verification has no network: {fetching}" if fetching else
            f"solve.sh does not earn the reward ({_describe(verdict)})" + (f"; solve.sh {failed}" if failed else ""))
    elif empty.resolved:
        check.status, check.why = "broken", "the untouched start state earns the reward"
    return check


async def validate(verifier: Verifier, tasks: list[Task], *, jobs: int = 2, repeat: int = 1, progress=None,
                   backend: SandboxBackend | None = None) -> list[TaskCheck]:
    """`backend`: where a terminal task's solution is played (`factory.sandbox.played`)."""
    gate = asyncio.Semaphore(jobs)

    async def one(task: Task) -> TaskCheck:
        async with gate:
            check = await check_task(verifier, task, repeat, backend)
        if progress:
            progress(check)
        return check

    return list(await asyncio.gather(*(one(t) for t in tasks)))


def write_results(path: Path, checks: list[TaskCheck]) -> None:
    """Write results whole or not at all: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(json.dumps({c.instance_id: asdict(c) for c in checks}, indent=1, sort_keys=True) + "\n")
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


def read_results(source: str, base: Path | None = None) -> dict[str, dict]:
    """The last validation of `source` per instance id ({} if it was never validated)."""
    for path in (results_path(source, base), _legacy_path(source, base)):
        if path is not None and path.is_file():
            try:
                return json.loads(path.read_text())
            except json.JSONDecodeError as exc:
                raise UsageError(f"{path}: not valid JSON ({exc.msg}); delete it and validate again") from None
    return {}


def measured(task: Task, results: dict[str, dict]) -> Task:
    """`task` with what the last validation of its source measured (`results`: `read_results`),
    when that validation found it valid: how long its gold fix took to verify, where its
    FAIL_TO_PASS tests fail under the empty patch."""
    check = results.get(task.instance_id)
    if not check or check["status"] != "valid":
        return task
    return task.model_copy(update={"test_seconds": check.get("seconds"), "fails_at": check.get("fails_at") or {}})


def invalid_ids(source: str, base: Path | None = None) -> dict[str, str]:
    """Ids that the last validation of `source` marked broken or flaky, with why (an infrastructure
    error says nothing about the task, so it does not count)."""
    return {iid: f"{c['status']}: {c['why']}" for iid, c in read_results(source, base).items() if c["status"] in ("broken", "flaky")}
