"""Every tool call of a turn in the warehouse, whole and redacted, and kept rows' exact token counts."""

from __future__ import annotations

import json

from factory.records import Message, ToolCall, ToolRun, Turn
from factory.warehouse import Warehouse, run_query
from tests.warehouse.sample import T0, attempt, task

LONG = "python - <<'EOF'\n" + "print('x')\n" * 40 + "EOF"
KEY = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def busy_attempt():
    """Turn 0 runs three calls (a long command, one with a credential, the editor); turn 1 submits."""
    a = attempt("r1", "mid", "A", 0, "pass")
    t = a.trajectory
    calls = [ToolCall(id="c1", name="bash", arguments=json.dumps({"command": LONG})),
             ToolCall(id="c2", name="bash", arguments=f'{{"command": "git push https://{KEY}@github.com/x"}}'),
             ToolCall(id="c3", name="str_replace_editor", arguments='{"command": "view", "path": "w.py"}')]
    messages = [*t.messages[:2], Message(role="assistant", tool_calls=calls),
                *[Message(role="tool", tool_call_id=c.id, content="out") for c in calls],
                Message(role="assistant", tool_calls=[ToolCall(id="c4", name="submit", arguments="{}")])]
    runs = [ToolRun(call_id="c1", exit_code=0, output_bytes=4400, seconds=0.5),
            ToolRun(call_id="c2", exit_code=128, output_bytes=60, seconds=2.0),
            ToolRun(call_id="c3", output_bytes=900, seconds=0.01)]
    a.trajectory = t.model_copy(update={"messages": messages, "turns": [Turn(tool_runs=runs), Turn()]})
    return a


def test_every_call_of_a_turn_is_recorded_whole_and_redacted_with_what_running_it_did(tmp_path):
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        wh.record_attempt(busy_attempt(), started_at=T0, finished_at=T0)
        wh.record_attempt(busy_attempt(), started_at=T0, finished_at=T0)  # written twice: once in the table
    rows = run_query(db, "SELECT turn_index, call_index, tool, command, ran, exit_code, output_bytes, seconds "
                         "FROM tool_calls ORDER BY turn_index, call_index").rows
    assert rows == [
        (0, 0, "bash", LONG, True, 0, 4400, 0.5),
        (0, 1, "bash", "git push https://[REDACTED:github_token]@github.com/x", True, 128, 60, 2.0),
        (0, 2, "str_replace_editor", '{"command": "view", "path": "w.py"}', True, None, 900, 0.01),
        (1, 0, "submit", "{}", False, None, None, None),
    ]
    [(first,)] = run_query(db, "SELECT command FROM turns WHERE turn_index = 0").rows
    assert first == LONG[:200]  # the turn keeps its first command short, as before
    assert KEY not in (tmp_path / "w.duckdb").read_bytes().decode("latin-1")


def test_a_build_records_kept_rows_exact_token_counts_and_the_next_build_replaces_them(tmp_path):
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        wh.record_tasks("r1", [task("mid")])
        for index in range(3):
            wh.record_attempt(attempt("r1", "mid", "A", index, "pass"), started_at=T0, finished_at=T0)
        row = {"instance_id": "mid", "teacher": "A", "tokens_exact": True}
        wh.record_token_counts("r1", [{**row, "attempt": 0, "num_tokens": 812, "assistant_tokens": 163},
                                      {**row, "attempt": 1, "num_tokens": 700, "assistant_tokens": 90},
                                      {**row, "attempt": 2, "num_tokens": 9, "assistant_tokens": 2,
                                       "tokens_exact": False}])
        wh.flush()
        assert run_query(db, "SELECT attempt_index, num_tokens, assistant_tokens FROM attempts ORDER BY 1").rows == [
            (0, 812, 163), (1, 700, 90), (2, None, None)]  # an estimate is not an exact count
        wh.record_token_counts("r1", [{**row, "attempt": 1, "num_tokens": 701, "assistant_tokens": 91}])
        wh.record_attempt(attempt("r1", "mid", "A", 1, "pass"), started_at=T0, finished_at=T0)  # a resync
    assert run_query(db, "SELECT attempt_index, num_tokens FROM attempts ORDER BY 1").rows == [
        (0, None), (1, 701), (2, None)]
