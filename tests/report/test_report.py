"""`factory report`: the page and its plots from a run's warehouse, the numbers they show, and
runs with nothing (or nothing paid) to show."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from factory.report import load_run, write_report
from factory.report.data import file_query
from factory.warehouse import Warehouse
from tests.report.reading import sections, table_rows
from tests.warehouse import sample

ROOT = Path(__file__).parent.parent.parent
FIGURES = ["funnel", "pass_rates", "over_time", "kept_vs_dropped", "exit_reasons", "teachers", "languages",
           "row_lengths", "trained_share", "reward_spread", "mixed_groups"]
SECTIONS = [*FIGURES, "tasks"]  # the per-task table is a table alone




def test_the_page_has_every_section_with_its_plot_next_to_it(db, tmp_path):
    page = write_report(db, "r1", tmp_path / "out")
    found = sections(page.read_text())
    assert list(found) == SECTIONS
    assert "<img" not in found.pop("tasks")
    for name, body in found.items():
        assert "<h2>" in body and '<p class="caption">' in body
        src = re.search(r'<img src="([^"]+)"', body).group(1)
        assert src == f"{name}.png"  # a relative path: the folder is self-contained
        assert (page.parent / src).read_bytes().startswith(b"\x89PNG")


def test_captions_say_what_each_rate_is_out_of(db, tmp_path):
    found = sections(write_report(db, "r1", tmp_path).read_text())
    assert "every % is of all 12 attempts" in found["funnel"]
    assert ("2 of 4 graded tasks are learnable (0 &lt; p &lt; 1, shaded), 1 too hard (p = 0), 1 too easy (p = 1); "
            "1 not graded yet.") in found["pass_rates"]
    assert "rows kept (4 of 12 attempts with a filter decision)" in found["over_time"]
    assert "cost in USD of the 11 priced attempts ($0.17); 1 unpriced attempt(s) not in it." in found["over_time"]
    assert "of the 12 attempts with a filter decision: 4 kept, 8 dropped" in found["kept_vs_dropped"]
    assert "pass rate = resolved / graded attempts; kept share = kept rows / all attempts" in found["teachers"]
    assert "Per language of the tasks" in found["languages"] and "kept rows = rows in the dataset" in found["languages"]


def test_the_numbers_are_the_warehouse_s_own(db):
    data = load_run(file_query(db), "r1")
    assert [(s.stage, s.remaining) for s in data.funnel] == [
        ("attempts", 12), ("resolved", 6), ("loops", 5), ("length", 5), ("dedup", 4),
        ("cap", 4), ("secrets", 4), ("render", 4), ("kept", 4)]
    assert {(d.filter, d.reason): d.attempts for d in data.drops} == {
        ("resolved", "not_resolved"): 4, ("resolved", "not_verified"): 1, ("resolved", "no_trajectory"): 1,
        ("loops", "repeated_action"): 1, ("dedup", "duplicate_patch"): 1}
    a, b = data.groups
    assert (a.label, a.graded, a.passed, a.kept, a.cost_per_kept) == ("A / factory", 6, 3, 2, pytest.approx(0.06))
    assert (b.label, b.graded, b.passed, b.pass_rate, b.unpriced, b.cost_per_kept) == ("B / factory", 5, 3, 0.6, 1, None)
    # per language, as pass_rate_by_language has them (tests/warehouse/test_queries.py)
    assert [(g.label, g.attempts, g.graded, g.passed, g.kept) for g in data.languages] == [
        ("go", 3, 3, 1, 1), ("python", 9, 8, 5, 3)]
    assert {t.instance_id: t.band for t in data.tasks} == {
        "hard": "too_hard", "mid2": "learnable", "mid": "learnable", "easy": "too_easy", "spare": "not_attempted"}


def test_a_run_without_attempts_says_so_in_every_section(tmp_path):
    db = tmp_path / "warehouse.duckdb"
    with Warehouse(db) as wh:
        wh.start_run("empty", "demo", "name: demo\n", "factory run")
        wh.record_tasks("empty", [sample.task("t1")])
    page = write_report(db, "empty", tmp_path / "out")
    text = page.read_text()
    assert "No attempts recorded for this run yet (1 task(s))" in text
    found = sections(text)
    assert list(found) == SECTIONS
    assert all('<p class="empty">' in found[name] and "<img" not in found[name] for name in FIGURES)
    assert "<td>t1</td>" in found["tasks"]  # a recorded task is listed before its first attempt
    assert not list(page.parent.glob("*.png"))


def test_a_run_before_its_filters_ran_draws_what_it_has(db, tmp_path):
    found = sections(write_report(db, "r2", tmp_path).read_text())
    assert "No filter decisions recorded for this run yet." in found["kept_vs_dropped"]
    assert '<img src="exit_reasons.png"' in found["exit_reasons"]
    assert not (tmp_path / "kept_vs_dropped.png").exists()


@pytest.mark.parametrize(("cost", "said"), [
    (0.0, "No cost recorded: every priced attempt cost $0."),
    (None, "No cost recorded: no attempt has a known price."),
])
def test_a_run_that_cost_nothing_says_so(tmp_path, cost, said):
    db = tmp_path / "warehouse.duckdb"
    with Warehouse(db) as wh:
        wh.start_run("free", "demo", "name: demo\n", "factory run")
        for index, outcome in enumerate(("pass", "fail", "pass")):
            wh.record_attempt(sample.attempt("free", "t1", "A", index, outcome, cost=cost),
                              started_at=sample.T0, finished_at=sample.T0)
    found = sections(write_report(db, "free", tmp_path / "out").read_text())
    assert said in found["over_time"]
    assert (tmp_path / "out" / "over_time.png").is_file()


def factory(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "factory.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_factory_report_writes_into_the_run_folder_or_out(built_run, tmp_path):
    out = factory("report", built_run.run_id, cwd=built_run.folder.parent.parent)  # a run id under ./runs
    assert out.returncode == 0, out.stderr
    assert (built_run.folder / "report" / "index.html").is_file()
    assert str(built_run.folder / "report" / "index.html") in out.stdout
    elsewhere = factory("report", str(built_run.folder), "--out", str(tmp_path / "r"))
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == sorted(
        ["index.html", "trajectories", *(f"{s}.png" for s in FIGURES)])


def test_an_unknown_run_is_one_line_and_exit_2(tmp_path):
    out = factory("report", "no-such-run", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.startswith("factory: no run 'no-such-run'") and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("n", "text"), [(950, "950"), (12_500, "12.5k"), (400_000, "400k"), (1_234_567, "1.2M"),
                                         (0, "0"), (0.25, "0.25"), (2_000_000_000, "2G")])
def test_numbers_read_as_a_person_says_them(n, text):
    from factory.report.model import readable

    assert readable(n) == text


def test_every_figure_is_also_a_table_of_its_numbers(db, tmp_path):
    page = write_report(db, "r1", tmp_path / "out").read_text()
    found = sections(page)
    assert all(body.count("<table>") == 1 for body in found.values())
    rows = lambda name: table_rows(found[name])  # noqa: E731
    funnel = rows("funnel")
    assert funnel[0] == ["attempts", "12", "100%", "", ""]
    assert funnel[1] == ["resolved", "6", "50%", "6", "not_resolved 4, no_trajectory 1, not_verified 1"]
    assert [r[0] for r in funnel] == ["attempts", "resolved", "loops", "length", "dedup", "cap", "secrets", "render",
                                      "kept"]  # each stage once: no `verified` before `resolved`
    teachers = {r[0]: r for r in rows("teachers")}
    assert teachers["A / factory"][1:] == ["6", "6", "3", "50%", "2", "33%", "$0.0600"]
    assert teachers["B / factory"][-1] == "unpriced"
    assert [r[:2] for r in rows("languages")] == [["go", "3"], ["python", "9"]]
