"""`factory export RUN --format rollouts --out FILE.parquet|FILE.jsonl`: one record per attempt, for RL.

    attempt files ─► graded attempts ─► reward (resolved, FAIL_TO_PASS share) ─► turns' sampled ids
                                                  └─ compared with the run's renderer ─► mismatches counted

A rollout is every graded attempt, kept or not (GRPO learns from the failures too); attempts that
infrastructure ended are no rollouts and are left out, counted. A group is one task sampled by one
teacher (`group_id` = `instance_id/teacher`), its members told apart by `repetition` (the attempt
index). The reward is the warehouse's (`v_rewards`): 1.0 resolved, else 0.0, and `f2p_passed`, the
share of the task's FAIL_TO_PASS tests that passed (missing ones failed), from the task as the
run's warehouse recorded it.

Each turn carries `prompt_token_ids`, `completion_token_ids` and `logprobs` where its teacher
recorded them (`record_tokens`), and `render_matches`: whether the run's renderer makes exactly
those ids of the turn (`factory.render.sampled`); `token_mismatches` counts the turns that differ.
Parquet when FILE ends in `.parquet`, else JSON lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory import __version__
from factory.errors import NothingExported, UsageError
from factory.records import Attempt, TestStatus, Verdict
from factory.run.folder import RunStore


def reward(verdict: Verdict | None) -> float:
    """1.0 resolved, else 0.0 (never verified counts as failed), as `v_rewards.reward`."""
    return 1.0 if verdict is not None and verdict.resolved else 0.0


def f2p_passed(verdict: Verdict | None, fail_to_pass: list[str] | None) -> float | None:
    """The share of FAIL_TO_PASS tests that passed, as `v_rewards.f2p_passed`; None without the task's list."""
    if not fail_to_pass:
        return None
    tests = verdict.tests if verdict is not None else {}
    return sum(tests.get(t) is TestStatus.passed for t in fail_to_pass) / len(fail_to_pass)


@dataclass
class RolloutSummary:
    out: Path
    written: int = 0
    infra: int = 0
    """Attempts that infrastructure ended: no rollouts."""
    with_ids: int = 0
    """Rollouts with at least one turn that recorded its token ids."""
    mismatched: int = 0
    """Of those, rollouts with a turn the renderer does not reproduce."""
    notes: list[str] = field(default_factory=list)

    def format_lines(self) -> list[str]:
        lines = [f"{self.written} rollout(s) written to {self.out} (RL rollout records), "
                 f"{self.with_ids} with token ids, {self.mismatched} of them differing from the render"]
        if self.infra:
            lines.append(f"left out {self.infra} attempt(s) that infrastructure ended (no rollout)")
        return lines + self.notes


def export_run(run_folder: Path, out: Path) -> RolloutSummary:
    store = RunStore(run_folder)
    attempts = sorted(store.attempts(), key=lambda a: (a.key.instance_id, a.key.teacher, a.key.index))
    summary = RolloutSummary(out)
    graded = [a for a in attempts if a.error_class is None and a.trajectory is not None]
    summary.infra = len(attempts) - len(graded)
    if not graded:
        raise NothingExported(f"run {store.run_id} has no graded attempt, nothing written to {out}")
    fail_to_pass = _fail_to_pass(store, summary)
    compare = _comparer(store, summary) if any(t.sampled for a in graded for t in a.trajectory.turns) else None
    records = [_record(a, fail_to_pass.get(a.key.instance_id), compare, summary) for a in graded]
    _write(records, out)
    summary.written = len(records)
    return summary


def _record(attempt: Attempt, fail_to_pass: list[str] | None, compare: Any, summary: RolloutSummary) -> dict[str, Any]:
    from factory.output.rows import message_dict

    t, key = attempt.trajectory, attempt.key
    assert t is not None
    matches: list[bool | None] = [None] * len(t.turns)
    if compare is not None and any(turn.sampled for turn in t.turns):
        summary.with_ids += 1
        diffs = compare(attempt)
        if diffs is not None:
            differing = {d.turn for d in diffs}
            matches = [None if turn.sampled is None else k not in differing for k, turn in enumerate(t.turns)]
            summary.mismatched += bool(differing)
    turns = [{
        "stop_reason": turn.stop_reason,
        "prompt_token_ids": turn.sampled.prompt_token_ids if turn.sampled else None,
        "completion_token_ids": turn.sampled.completion_token_ids if turn.sampled else None,
        "logprobs": turn.sampled.logprobs if turn.sampled else None,
        "render_matches": match,
    } for turn, match in zip(t.turns, matches, strict=True)]
    return {
        "run_id": key.run_id,
        "group_id": f"{key.instance_id}/{key.teacher}",
        "instance_id": key.instance_id,
        "teacher": key.teacher,
        "repetition": key.index,
        "reward": reward(attempt.verdict),
        "resolved": attempt.verdict.resolved if attempt.verdict else None,
        "f2p_passed": f2p_passed(attempt.verdict, fail_to_pass),
        "stop_reason": t.exit.value,
        "model": t.model,
        "harness": t.harness,
        "scripted": t.scripted,
        "factory_version": __version__,
        "finished_at": attempt.finished_at.isoformat() if attempt.finished_at else None,
        "token_mismatches": sum(m is False for m in matches),
        "turns": turns,
        "messages": [message_dict(m) for m in t.messages],
        "tools": [json.dumps(tool) for tool in t.tools],
    }


def _fail_to_pass(store: RunStore, summary: RolloutSummary) -> dict[str, list[str]]:
    """Each task's FAIL_TO_PASS, as the run's warehouse recorded it at the run's start."""
    from factory.warehouse import WarehouseBusy, run_query

    try:
        rows = run_query(store.warehouse_path, "SELECT instance_id, fail_to_pass FROM tasks WHERE run_id = ?",
                         [store.run_id]).rows
    except (UsageError, WarehouseBusy) as exc:
        summary.notes.append(f"f2p_passed left empty: the run's tasks could not be read ({exc})")
        return {}
    return {instance_id: list(f2p or []) for instance_id, f2p in rows}


def _comparer(store: RunStore, summary: RolloutSummary) -> Any:
    """attempt -> its turns the run's renderer does not reproduce (None when it cannot render it)."""
    from factory.render import RenderError, build_renderer
    from factory.render.sampled import compare_sampled
    from factory.run.runner import pipeline_of

    renderer = build_renderer(template=pipeline_of(store).output.template)

    def compare(attempt: Attempt) -> Any:
        t = attempt.trajectory
        try:
            rendered = renderer.render(t.messages, t.tools)
        except RenderError as exc:
            summary.notes.append(f"{attempt.key.instance_id}/{attempt.key.teacher}/{attempt.key.index}: "
                                 f"not compared with the render ({exc})")
            return None
        return compare_sampled(rendered.input_ids, rendered.assistant_masks, t.turns)

    return compare


def _write(records: list[dict[str, Any]], out: Path) -> None:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(records, schema=_schema()), out)
        else:
            out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write ({exc.strerror}); choose another file") from exc


def _schema() -> Any:
    """The Parquet schema, fixed so that a run whose turns recorded no ids still has typed columns."""
    import pyarrow as pa

    ids, string = pa.list_(pa.int64()), pa.string()
    turn = pa.struct([("stop_reason", string), ("prompt_token_ids", ids), ("completion_token_ids", ids),
                      ("logprobs", pa.list_(pa.float64())), ("render_matches", pa.bool_())])
    call = pa.struct([("id", string), ("type", string), ("function", pa.struct([("name", string), ("arguments", string)]))])
    message = pa.struct([("role", string), ("content", string), ("reasoning_content", string),
                         ("tool_calls", pa.list_(call)), ("tool_call_id", string), ("name", string)])
    return pa.schema([
        ("run_id", string), ("group_id", string), ("instance_id", string), ("teacher", string),
        ("repetition", pa.int32()), ("reward", pa.float64()), ("resolved", pa.bool_()), ("f2p_passed", pa.float64()),
        ("stop_reason", string), ("model", string), ("harness", string), ("scripted", pa.bool_()),
        ("factory_version", string), ("finished_at", string), ("token_mismatches", pa.int32()),
        ("turns", pa.list_(turn)), ("messages", pa.list_(message)), ("tools", pa.list_(string)),
    ])
