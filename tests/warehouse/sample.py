"""A small hand-built warehouse whose every named-query answer is worked out by hand.

Run r1 (teacher A priced at $0.02 an attempt, B at $0.01 with one unpriced attempt; every
attempt has 2 turns of 100 input + 10 output tokens):

    task   attempts (teacher#index: outcome)                         filter decision
    easy   A#0 pass, A#1 pass                                        A#1 dedup
    hard   A#0 fail, A#1 max_turns (never verified), B#0 SandboxCrashed   all resolved
    mid    A#0 pass, A#1 fail, B#0 pass, B#1 pass                    A#1 resolved, B#1 loops
    mid2   B#0 pass, B#1 fail, B#2 fail                              B#1, B#2 resolved
    spare  (recorded, never attempted)

Run r2: task solo, A#0 pass, A#1 fail; no filter decisions yet.

Languages: mid2 is a Go task, solo a Rust one, the rest Python.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from factory.filters.base import Drop, DropReason
from factory.records import (
    Attempt,
    AttemptKey,
    Exit,
    Message,
    Reason,
    Task,
    TestStatus,
    ToolCall,
    Trajectory,
    Turn,
    Usage,
    Verdict,
)
from factory.warehouse import Warehouse

T0 = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)
F2P, P2P = "tests/test_x.py::test_fix", "tests/test_x.py::test_old"


LANGUAGES = {"mid2": "go", "solo": "rust"}


def task(instance_id: str) -> Task:
    return Task(instance_id=instance_id, repo="acme/widgets", problem_statement=f"fix {instance_id}",
                image=f"img/{instance_id}", FAIL_TO_PASS=[F2P], PASS_TO_PASS=[P2P], source="local:demo",
                language=LANGUAGES.get(instance_id, "python"))


def attempt(run_id: str, instance_id: str, teacher: str, index: int, outcome: str, *,
            cost: float | None = 0.01) -> Attempt:
    """outcome: pass, fail, max_turns (unverified) or crash (infrastructure error)."""
    exit_ = {"max_turns": Exit.max_turns, "crash": Exit.sandbox_error}.get(outcome, Exit.submitted)
    messages = [
        Message(role="system", content="s" * 40),
        Message(role="user", content="u" * 80),
        Message(role="assistant", content="a" * 20, tool_calls=[ToolCall(id="c1", name="bash", arguments='{"command": "ls"}')]),
        Message(role="tool", content="t" * 400, tool_call_id="c1", name="bash"),
        Message(role="assistant", content="done" * 3),
    ]
    trajectory = Trajectory(
        instance_id=instance_id, teacher=teacher, model=f"{teacher}-model", messages=messages,
        patch="" if outcome in ("max_turns", "crash") else "diff --git a/w.py b/w.py\n+x\n",
        exit=exit_, wall_seconds=10.0,
        turns=[Turn(usage=Usage(input_tokens=100, output_tokens=10), cost_usd=None if cost is None else cost / 2,
                    seconds=1.5, retries=i) for i in range(2)],
    )
    verdict = None
    if outcome in ("pass", "fail"):
        verdict = Verdict(
            resolved=outcome == "pass", reason=None if outcome == "pass" else Reason.tests_failed, seconds=3.0,
            tests={F2P: TestStatus.passed if outcome == "pass" else TestStatus.failed, P2P: TestStatus.passed},
        )
    return Attempt(key=AttemptKey(run_id=run_id, instance_id=instance_id, teacher=teacher, index=index),
                   repo="acme/widgets", trajectory=trajectory, verdict=verdict,
                   error_class="SandboxCrashed" if outcome == "crash" else None)


R1 = [
    ("easy", "A", 0, "pass"), ("easy", "A", 1, "pass"),
    ("hard", "A", 0, "fail"), ("hard", "A", 1, "max_turns"), ("hard", "B", 0, "crash"),
    ("mid", "A", 0, "pass"), ("mid", "A", 1, "fail"), ("mid", "B", 0, "pass"), ("mid", "B", 1, "pass"),
    ("mid2", "B", 0, "pass"), ("mid2", "B", 1, "fail"), ("mid2", "B", 2, "fail"),
]
R1_DROPS = [
    ("easy", "A", 1, "dedup", DropReason.duplicate_patch),
    ("hard", "A", 0, "resolved", DropReason.not_resolved), ("hard", "A", 1, "resolved", DropReason.not_verified),
    ("hard", "B", 0, "resolved", DropReason.no_trajectory),
    ("mid", "A", 1, "resolved", DropReason.not_resolved), ("mid", "B", 1, "loops", DropReason.repeated_action),
    ("mid2", "B", 1, "resolved", DropReason.not_resolved), ("mid2", "B", 2, "resolved", DropReason.not_resolved),
]


def key(run_id: str, instance_id: str, teacher: str, index: int) -> AttemptKey:
    return AttemptKey(run_id=run_id, instance_id=instance_id, teacher=teacher, index=index)


def build(path: Path) -> Path:
    with Warehouse(path) as wh:
        wh.start_run("r1", "demo", "name: demo\n", "factory run pipelines/demo.yaml")
        wh.record_tasks("r1", [task(t) for t in ("easy", "hard", "mid", "mid2", "spare")])
        for instance_id, teacher, index, outcome in R1:
            cost = None if outcome == "crash" else (0.02 if teacher == "A" else 0.01)
            wh.record_attempt(attempt("r1", instance_id, teacher, index, outcome, cost=cost),
                              started_at=T0, finished_at=T0)
        wh.record_drops("r1", [Drop(key("r1", i, t, n), f, r, "why").to_row() for i, t, n, f, r in R1_DROPS])
        wh.start_run("r2", "demo", "name: demo\n", "factory run pipelines/demo.yaml")
        wh.record_tasks("r2", [task("solo")])
        for index, outcome in enumerate(("pass", "fail")):
            wh.record_attempt(attempt("r2", "solo", "A", index, outcome), started_at=T0, finished_at=T0)
    return path
