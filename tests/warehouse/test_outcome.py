"""One label per attempt: Python (`Attempt.outcome`: show, progress) and SQL (`v_attempts.outcome`) agree."""

from __future__ import annotations

import json

from factory.records import Reason, Verdict
from factory.warehouse import Warehouse, run_query
from tests.warehouse.sample import T0, attempt, task


def test_python_and_the_warehouse_give_every_attempt_the_same_outcome(tmp_path):
    attempts = [attempt("r", "t1", "A", i, kind) for i, kind in enumerate(["pass", "fail", "max_turns", "crash"])]
    attempts.append(attempt("r", "t1", "A", 4, "fail").model_copy(update={"verdict": Verdict(resolved=False)}))
    attempts.append(attempt("r", "t1", "A", 5, "fail").model_copy(
        update={"verdict": Verdict(resolved=False, reason=Reason.tampered)}))
    attempts.append(attempt("r", "t1", "A", 6, "max_turns").model_copy(update={"trajectory": None}))
    db = tmp_path / "w.duckdb"
    wh = Warehouse(db)
    wh.start_run("r", "demo", "name: demo\n", "factory run demo.yaml")
    wh.record_tasks("r", [task("t1")])
    for a in attempts:
        wh.record_attempt(a, started_at=T0, finished_at=T0)
    wh.close()
    rows = dict(run_query(db, "SELECT attempt_index, outcome FROM v_attempts ORDER BY attempt_index").rows)
    assert rows == {a.key.index: a.outcome for a in attempts}
    assert len(set(rows.values())) == len(attempts)  # every kind of attempt here has a label of its own


def test_each_turn_records_what_it_called(tmp_path):
    """Which commands do agents run: the tool names of every turn and its first command, queryable."""
    a = attempt("r", "t1", "A", 0, "pass")
    long = a.trajectory.messages[2].tool_calls[0].model_copy(update={"arguments": json.dumps({"command": "x" * 500})})
    a.trajectory.messages.append(a.trajectory.messages[2].model_copy(update={"tool_calls": [long]}))
    db = tmp_path / "w.duckdb"
    wh = Warehouse(db)
    wh.start_run("r", "demo", "name: demo\n", "factory run demo.yaml")
    wh.record_tasks("r", [task("t1")])
    wh.record_attempt(a, started_at=T0, finished_at=T0)
    wh.close()
    rows = run_query(db, "SELECT turn_index, tools, command FROM turns ORDER BY turn_index").rows
    assert rows[0] == (0, ["bash"], "ls") and rows[1] == (1, [], None)
    assert rows[2][1] == ["bash"] and rows[2][2] == "x" * 200
    top = run_query(db, "SELECT command, count(*) FROM turns WHERE command IS NOT NULL GROUP BY ALL ORDER BY 2 DESC").rows
    assert ("ls", 1) in top
