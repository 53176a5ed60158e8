"""The `attempts` config (`output.include_failures: true`): every graded attempt, passed or not.

Verifiers and preference training want the failures too, labelled. A row per attempt that the
model is answerable for (infrastructure errors are not), with its verdict, the filter decision
that kept or dropped it, and the conversation. Credentials are redacted in every row with the
`secrets` filter's scanner, whatever its `action`, since most of these rows never reached it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from datasets import Features, Json, List, Value

from factory.filters import ChainResult, SecretsConfig, SecretsFilter
from factory.filters.base import key_id
from factory.output.rows import MESSAGE_FEATURE, message_dict, ordered
from factory.records import Attempt, Task

_STRING = Value("string")

ATTEMPTS_FEATURES = Features(
    {
        "instance_id": _STRING,
        "run_id": _STRING,
        "teacher": _STRING,
        "attempt": Value("int32"),
        "repo": _STRING,
        "model": _STRING,
        "harness": _STRING,
        "scripted": Value("bool"),
        "resolved": Value("bool"),
        "verified_by": _STRING,
        "guarantee": _STRING,
        "reward": Value("float64"),
        "outcome": _STRING,
        "reason": _STRING,
        "decided_by": _STRING,
        "verdict_detail": _STRING,
        "tests": List({"test": _STRING, "status": _STRING}),
        "exit": _STRING,
        "turns": Value("int32"),
        "cost_usd": Value("float64"),
        "wall_seconds": Value("float64"),
        "kept": Value("bool"),
        "dropped_by": _STRING,
        "drop_reason": _STRING,
        "drop_detail": _STRING,
        "flags": List(_STRING),
        "secrets_redacted": Value("bool"),
        "patch": _STRING,
        "FAIL_TO_PASS": List(_STRING),
        "messages": List(MESSAGE_FEATURE),
        "tools": List(Json()),
    }
)


def graded(attempt: Attempt) -> bool:
    """An attempt the model answers for: it has a trajectory and infrastructure did not end it."""
    return attempt.trajectory is not None and attempt.error_class is None


def attempt_rows(
    attempts: Sequence[Attempt],
    chain: ChainResult,
    *,
    tasks: Mapping[str, Task] | None = None,
    secrets: SecretsConfig | None = None,
) -> list[dict[str, Any]]:
    """One row per graded attempt, in the dataset's order, with the chain's decision about it."""
    kept = {key_id(a.key) for a in chain.kept}
    drops = {key_id(d.key): d for d in chain.drops}
    flags: dict[tuple[str, str, str, int], list[str]] = {}
    for flag in chain.flags:
        flags.setdefault(key_id(flag.key), []).append(f"{flag.filter}:{flag.code}")
    scanner = SecretsFilter(secrets)
    tasks = tasks or {}
    rows = []
    for original in (a for a in ordered(attempts) if graded(a)):
        attempt, found, _ = scanner.scan(original)
        trajectory, verdict, key = attempt.trajectory, attempt.verdict, attempt.key
        assert trajectory is not None
        detail, detail_found = scanner.scanner.redact(verdict.detail if verdict else "")
        drop = drops.get(key_id(key))
        task = tasks.get(key.instance_id)
        rows.append({
            "instance_id": key.instance_id,
            "run_id": key.run_id,
            "teacher": key.teacher,
            "attempt": key.index,
            "repo": attempt.repo or (task.repo if task else ""),
            "model": trajectory.model,
            "harness": trajectory.harness,
            "scripted": trajectory.scripted,
            "resolved": bool(verdict and verdict.resolved),
            "verified_by": verdict.verified_by.value if verdict else None,
            "guarantee": verdict.guarantee.value if verdict else None,
            "reward": verdict.reward if verdict else None,
            "outcome": attempt.outcome,
            "reason": verdict.reason.value if verdict and verdict.reason else None,
            "decided_by": verdict.decided_by.value if verdict and verdict.decided_by else None,
            "verdict_detail": detail,
            "tests": [{"test": t, "status": s.value} for t, s in (verdict.tests.items() if verdict else ())],
            "exit": trajectory.exit.value,
            "turns": sum(1 for m in trajectory.messages if m.role == "assistant"),
            "cost_usd": trajectory.cost_usd,
            "wall_seconds": trajectory.wall_seconds,
            "kept": key_id(key) in kept,
            "dropped_by": drop.filter if drop else None,
            "drop_reason": str(drop.reason) if drop else None,
            "drop_detail": scanner.scanner.redact(drop.detail)[0] if drop else None,
            "flags": flags.get(key_id(key), []),
            "secrets_redacted": bool(found or detail_found),
            "patch": trajectory.patch,
            "FAIL_TO_PASS": list(task.FAIL_TO_PASS) if task else [],
            "messages": [message_dict(m) for m in trajectory.messages],
            "tools": list(trajectory.tools),
        })
    return rows
