"""One label per attempt: Python (`Attempt.outcome`: show, progress) and SQL (`v_attempts.outcome`) agree."""

from __future__ import annotations

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
