"""Records as warehouse rows: one flat dict per row, keys named as the columns of schema.sql.

Tokens by role are estimates, characters / 4 (rounded up), because providers report usage per
call, not per message: a turn's assistant message (text, reasoning, tool-call names and
arguments), the tool results that answered it, and any user message after it (a re-prompt).
The system prompt and the first user message count on the attempt row only. A kept row's exact
counts come from the renderer at build time (`token_rows`).

Commands are kept whole, with credentials replaced as the `secrets` filter replaces them (its
built-in patterns): the warehouse is read by people the dataset is not shown to.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import yaml

from factory.filters.secrets import SecretScanner
from factory.records import Attempt, Message, Task, ToolCall, Trajectory

Row = dict[str, Any]
KeyTuple = tuple[str, str, str, int]
KEY_COLUMNS = ("run_id", "instance_id", "teacher", "attempt_index")


def message_tokens(message: Message) -> int:
    chars = len(message.content) + len(message.reasoning or "")
    chars += sum(len(call.name) + len(call.arguments) for call in message.tool_calls)
    return (chars + 3) // 4


def utc(moment: datetime) -> datetime:
    """Naive UTC, as the schema's TIMESTAMP columns hold it (naive input is taken as UTC)."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def run_row(run_id: str, pipeline_name: str, pipeline_yaml: str, command: str, now: datetime) -> Row:
    return {
        "run_id": run_id,
        "pipeline_name": pipeline_name,
        "pipeline_yaml": pipeline_yaml,
        "command": command,
        "started_at": utc(now),
        "last_started_at": utc(now),
    }


def build_row(run_id: str, filters: dict[str, Any], command: str | None, now: datetime) -> Row:
    return {"run_id": run_id, "built_at": utc(now), "command": command,
            "filters_yaml": yaml.safe_dump(filters, sort_keys=False)}


def task_row(run_id: str, task: Task) -> Row:
    return {
        "run_id": run_id,
        "instance_id": task.instance_id,
        "repo": task.repo,
        "source": task.source,
        "language": task.language,
        "image": task.image,
        "problem_statement": task.problem_statement,
        "fail_to_pass": list(task.FAIL_TO_PASS),
        "pass_to_pass": list(task.PASS_TO_PASS),
    }


def key_of(row: Row) -> KeyTuple:
    return (row["run_id"], row["instance_id"], row["teacher"], int(row["attempt_index"]))


def _key_row(attempt: Attempt) -> Row:
    k = attempt.key
    return {"run_id": k.run_id, "instance_id": k.instance_id, "teacher": k.teacher, "attempt_index": k.index}


def _role_tokens(trajectory: Trajectory) -> tuple[dict[str, int], list[dict[str, int]]]:
    """(prompt tokens by role before the first reply, per-turn tokens by role)."""
    prompt = {"system": 0, "user": 0, "tool": 0}
    per_turn: list[dict[str, int]] = []
    for message in trajectory.messages:
        tokens = message_tokens(message)
        if message.role == "assistant":
            per_turn.append({"assistant": tokens, "tool": 0, "user": 0})
        elif per_turn:
            role = "tool" if message.role == "tool" else "user"
            per_turn[-1][role] += tokens
        else:
            prompt["system" if message.role == "system" else "user" if message.role == "user" else "tool"] += tokens
    return prompt, per_turn


def attempt_row(attempt: Attempt, started_at: datetime, finished_at: datetime, kept: bool | None) -> Row:
    t, v = attempt.trajectory, attempt.verdict
    row: Row = {
        **_key_row(attempt),
        "repo": attempt.repo,
        "model": t.model if t else None,
        "scripted": t.scripted if t else None,
        "harness": t.harness if t else None,
        "exit": str(t.exit) if t else None,
        "error_class": attempt.error_class,
        "error": t.error if t else None,
        "resolved": v.resolved if v else None,
        "verified_by": str(v.verified_by) if v else None,
        "guarantee": str(v.guarantee) if v else None,
        "reward": v.reward if v else None,
        "verdict_reason": str(v.reason) if v and v.reason else None,
        "verdict_detail": v.detail if v else None,
        "verify_seconds": v.seconds if v else None,
        "flags": [str(f) for f in v.flags] if v else [],
        "infra_failures": list(attempt.infra_failures),
        "node": attempt.node,
        "kept": kept,
        "started_at": utc(started_at),
        "finished_at": utc(finished_at),
    }
    if t is None:
        empty = dict.fromkeys(("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"), 0)
        roles = dict.fromkeys(("system", "user", "assistant", "tool"), 0)
        return {**row, **empty, "n_turns": 0, "cost_usd": None, "possibly_billed": 0, "possibly_billed_usd": 0.0,
                "wall_seconds": None, "patch_bytes": 0, "patch_files": 0,
                **{f"{r}_tokens_est": n for r, n in roles.items()}}
    usage = t.usage
    prompt, per_turn = _role_tokens(t)
    return {
        **row,
        "n_turns": max(len(t.turns), len(per_turn)),
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "cost_usd": t.cost_usd,
        "possibly_billed": len(t.possibly_billed),
        "possibly_billed_usd": t.possibly_billed_usd,
        "wall_seconds": t.wall_seconds,
        "patch_bytes": len(t.patch.encode()),
        "patch_files": sum(1 for line in t.patch.splitlines() if line.startswith("diff --git ")),
        "system_tokens_est": prompt["system"],
        "user_tokens_est": prompt["user"] + sum(turn["user"] for turn in per_turn),
        "assistant_tokens_est": sum(turn["assistant"] for turn in per_turn),
        "tool_tokens_est": prompt["tool"] + sum(turn["tool"] for turn in per_turn),
    }


def turn_rows(attempt: Attempt) -> list[Row]:
    t = attempt.trajectory
    if t is None:
        return []
    _, per_turn = _role_tokens(t)
    said = [m for m in t.messages if m.role == "assistant"]  # one assistant message per teacher call
    rows = []
    for i in range(max(len(t.turns), len(per_turn))):
        turn = t.turns[i] if i < len(t.turns) else None
        roles = per_turn[i] if i < len(per_turn) else {"assistant": 0, "tool": 0, "user": 0}
        usage = turn.usage if turn else None
        calls = said[i].tool_calls if i < len(said) else []
        rows.append({
            **_key_row(attempt),
            "turn_index": i,
            "tools": [c.name for c in calls],
            "command": command(calls[0])[:COMMAND_CHARS] if calls else None,
            "input_tokens": usage.input_tokens if usage else None,
            "output_tokens": usage.output_tokens if usage else None,
            "cache_read_tokens": usage.cache_read_tokens if usage else None,
            "cache_write_tokens": usage.cache_write_tokens if usage else None,
            "cost_usd": turn.cost_usd if turn else None,
            "seconds": turn.seconds if turn else None,
            "retries": turn.retries if turn else None,
            "assistant_tokens_est": roles["assistant"],
            "tool_tokens_est": roles["tool"],
            "user_tokens_est": roles["user"],
        })
    return rows


COMMAND_CHARS = 200
"""A turn's first command is kept this long on its `turns` row; `tool_calls` has every one whole."""

_SCANNER = SecretScanner.from_config()


def command(call: ToolCall) -> str:
    """The shell command of a `bash` call, else the call's arguments as sent (the editor's
    `command` is only its verb); credentials redacted."""
    try:
        parsed = json.loads(call.arguments) if call.name == "bash" else None
    except ValueError:
        parsed = None
    text = parsed["command"] if isinstance(parsed, dict) and isinstance(parsed.get("command"), str) else call.arguments
    return _SCANNER.redact(text)[0]


def tool_call_rows(attempt: Attempt) -> list[Row]:
    """Every tool call of every turn, with what running it did; a call that never ran (a malformed
    turn's, `submit`) has no exit code, bytes or seconds, and `ran` false."""
    t = attempt.trajectory
    if t is None:
        return []
    said = [m for m in t.messages if m.role == "assistant"]
    rows = []
    for i, message in enumerate(said):
        runs = {run.call_id: run for run in t.turns[i].tool_runs} if i < len(t.turns) else {}
        for k, call in enumerate(message.tool_calls):
            run = runs.get(call.id)
            rows.append({
                **_key_row(attempt), "turn_index": i, "call_index": k, "call_id": call.id, "tool": call.name,
                "command": command(call), "ran": run is not None,
                "exit_code": run.exit_code if run else None, "timed_out": run.timed_out if run else None,
                "output_bytes": run.output_bytes if run else None, "seconds": run.seconds if run else None,
            })
    return rows


def token_rows(run_id: str, rows: list[dict]) -> list[Row]:
    """A build's exact token counts of its kept rows (the dataset's `messages` rows)."""
    return [{"run_id": run_id, "instance_id": r["instance_id"], "teacher": r["teacher"], "attempt_index": r["attempt"],
             "num_tokens": r["num_tokens"], "assistant_tokens": r["assistant_tokens"]}
            for r in rows if r.get("tokens_exact")]


def result_rows(attempt: Attempt) -> list[Row]:
    """Per-test status; `kind` (F2P / P2P) is filled in from the task when it is written."""
    if attempt.verdict is None:
        return []
    base = _key_row(attempt)
    return [{**base, "test_id": test_id, "status": str(status)} for test_id, status in attempt.verdict.tests.items()]
