"""`factory query` as a typer command: three output formats, named queries, one-line errors."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest
import typer

from factory.errors import UsageError
from factory.warehouse import find_database
from factory.warehouse.cli import query
from tests import cli_runner
from tests.warehouse import sample

app = typer.Typer()
app.command()(query)


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    return sample.build(tmp_path_factory.mktemp("cli") / "warehouse.duckdb")


def invoke(*args: str) -> str:
    return cli_runner.invoke(app, *args)


def test_json_is_a_list_of_objects(db):
    rows = json.loads(invoke("learnable_tasks", "--db", str(db), "--format", "json"))
    assert [(r["run_id"], r["instance_id"], r["graded"], r["passed"]) for r in rows] == [
        ("r1", "mid2", 3, 1), ("r1", "mid", 4, 3), ("r2", "solo", 2, 1)]
    assert rows[1]["p_mixed_8"] == pytest.approx(1 - 0.75**8 - 0.25**8)


def test_csv_has_a_header_and_exports_one_run(db):
    rows = list(csv.DictReader(io.StringIO(invoke("learnable_tasks", "--db", str(db), "--format", "csv", "--run", "r1"))))
    assert [r["instance_id"] for r in rows] == ["mid2", "mid"]
    assert float(rows[0]["pass_rate"]) == pytest.approx(1 / 3)
    assert list(rows[0]) [:3] == ["run_id", "instance_id", "repo"]


def test_csv_and_json_carry_nulls_lists_and_timestamps(db):
    sql = "SELECT started_at, flags, cost_usd FROM attempts WHERE instance_id = 'hard' AND teacher = 'B'"
    assert invoke(sql, "--db", str(db), "-f", "csv") == "started_at,flags,cost_usd\n2025-01-01T12:00:00,[],\n"
    assert json.loads(invoke(sql, "--db", str(db), "-f", "json")) == [
        {"started_at": "2025-01-01T12:00:00", "flags": [], "cost_usd": None}]


def test_table_output_shows_the_funnel(db):
    out = invoke("funnel", "--db", str(db), "--run", "r1")
    lines = [line for line in out.splitlines() if " dedup " in line or "kept" in line]
    assert len(lines) == 2 and "4" in lines[0] and "33.3" in lines[1]
    assert "(9 rows)" in out  # one row a stage: attempts, graded, each filter, kept


def test_sql_runs_as_given(db):
    out = json.loads(invoke("SELECT count(*) AS n FROM attempts WHERE run_id = 'r1'", "--db", str(db), "-f", "json"))
    assert out == [{"n": 12}]


def test_unknown_query_name_lists_the_valid_ones(db):
    with pytest.raises(UsageError) as err:
        invoke("funel", "--db", str(db))
    message = str(err.value)
    assert "unknown query 'funel'" in message and "funnel, learnable_tasks" in message and "\n" not in message


def test_sql_error_is_one_line(db):
    with pytest.raises(UsageError, match=r"^SQL error: Catalog Error: Table with name nope does not exist!") as err:
        invoke("SELECT * FROM nope", "--db", str(db))
    assert "\n" not in str(err.value)
    with pytest.raises(UsageError, match="syntax error") as err:
        invoke("SELEC 1 FROM attempts", "--db", str(db))
    assert "\n" not in str(err.value) and "^" not in str(err.value)


def test_bad_format_missing_database_and_run_filter_without_run_id(db, tmp_path):
    with pytest.raises(UsageError, match="valid formats: table, csv, json"):
        invoke("funnel", "--db", str(db), "-f", "xml")
    with pytest.raises(UsageError, match="no warehouse at"):
        invoke("funnel", "--db", str(tmp_path / "nowhere.duckdb"))
    with pytest.raises(UsageError, match="--run needs a query that returns a run_id column"):
        invoke("SELECT count(*) FROM attempts", "--db", str(db), "--run", "r1")
    with pytest.raises(UsageError, match=r"--run no-such-run: no such run in .* \(runs there: r1"):
        invoke("funnel", "--db", str(db), "--run", "no-such-run")


def test_without_db_the_most_recent_run_is_read(db, tmp_path, monkeypatch):
    for i, run in enumerate(("old", "new")):
        target = tmp_path / "pipelines" / "runs" / run / "warehouse.duckdb"
        target.parent.mkdir(parents=True)
        target.write_bytes(db.read_bytes())
        os.utime(target, (1_000_000 + i, 1_000_000 + i))
    monkeypatch.chdir(tmp_path)
    assert find_database() == tmp_path / "pipelines" / "runs" / "new" / "warehouse.duckdb"
    assert json.loads(invoke("SELECT count(*) AS n FROM runs", "-f", "json")) == [{"n": 2}]
    monkeypatch.chdir(tmp_path / "pipelines" / "runs")
    with pytest.raises(UsageError, match="pass --db PATH"):
        invoke("funnel")


def test_your_own_named_queries_in_warehouse_queries(db, tmp_path, monkeypatch):
    (tmp_path / "warehouse" / "queries").mkdir(parents=True)
    (tmp_path / "warehouse" / "queries" / "teachers.sql").write_text(
        "-- teachers: who ran\nSELECT DISTINCT teacher FROM attempts ORDER BY 1;\n")
    monkeypatch.chdir(tmp_path)
    assert json.loads(invoke("teachers", "--db", str(db), "-f", "json")) == [{"teacher": "A"}, {"teacher": "B"}]
    assert "(9 rows)" in invoke("funnel", "--db", str(db), "--run", "r1")  # the built-in ones remain
