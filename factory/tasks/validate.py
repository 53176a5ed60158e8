"""Environment validation: the gold fix must resolve a task and the empty patch must not.

A teacher's dollar spent on a broken task is wasted, so a task set is checked before use.
With `repeat` > 1 the gold check runs several times and tasks whose results differ are
marked flaky. Results are written next to the task source so runs can skip bad tasks.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from factory.errors import VerifyError
from factory.protocols import Verifier
from factory.records import Task, Verdict


@dataclass
class TaskCheck:
    instance_id: str
    status: str  # valid | broken | flaky | infra_error (the engine failed: says nothing of the task)
    why: str = ""
    gold: list[str] = field(default_factory=list)
    empty: str = ""
    seconds: float | None = None
    """The slowest verification of the gold fix: the basis of the task's verification timeout."""


def results_path(source: str) -> Path:
    """Where validation results of a source live: beside it for local sources."""
    path = Path(source)
    if path.is_dir():
        return path / "validation.json"
    if path.suffix in (".jsonl", ".json", ".parquet"):
        return path.with_suffix(".validation.json")
    return Path.cwd() / f"{source.replace('/', '__')}.validation.json"


def _describe(v: Verdict) -> str:
    return "resolved" if v.resolved else f"{v.reason}: {v.detail}"[:300]


async def check_task(verifier: Verifier, task: Task, repeat: int = 1) -> TaskCheck:
    try:
        golds = [await verifier.verify(task, task.gold_patch) for _ in range(repeat)]
        empty = await verifier.verify(task, "")
    except VerifyError as exc:
        return TaskCheck(task.instance_id, "infra_error", why=str(exc)[:300])
    check = TaskCheck(task.instance_id, "valid", gold=[_describe(v) for v in golds], empty=_describe(empty),
                      seconds=round(max(v.seconds for v in golds), 2))
    outcomes = {v.resolved for v in golds}
    if len(outcomes) > 1:
        check.status, check.why = "flaky", "the gold fix resolved in some runs and not in others"
    elif not golds[0].resolved:
        check.status, check.why = "broken", f"gold fix does not resolve ({_describe(golds[0])})"
    elif empty.resolved:
        check.status, check.why = "broken", "the empty patch resolves: FAIL_TO_PASS tests do not fail at the start"
    return check


async def validate(verifier: Verifier, tasks: list[Task], *, jobs: int = 2, repeat: int = 1, progress=None) -> list[TaskCheck]:
    gate = asyncio.Semaphore(jobs)

    async def one(task: Task) -> TaskCheck:
        async with gate:
            check = await check_task(verifier, task, repeat)
        if progress:
            progress(check)
        return check

    return list(await asyncio.gather(*(one(t) for t in tasks)))


def write_results(path: Path, checks: list[TaskCheck]) -> None:
    path.write_text(json.dumps({c.instance_id: asdict(c) for c in checks}, indent=1, sort_keys=True) + "\n")


def _results(source: str) -> dict[str, dict]:
    path = results_path(source)
    return json.loads(path.read_text()) if path.exists() else {}


def measured_seconds(source: str) -> dict[str, float]:
    """Seconds the gold fix took to verify, per valid task of the last validation of `source`."""
    return {iid: c["seconds"] for iid, c in _results(source).items() if c["status"] == "valid" and c.get("seconds")}


def invalid_ids(source: str) -> dict[str, str]:
    """Ids that the last validation of `source` marked broken or flaky, with why (an infrastructure
    error says nothing about the task, so it does not count)."""
    return {iid: f"{c['status']}: {c['why']}" for iid, c in _results(source).items() if c["status"] in ("broken", "flaky")}
