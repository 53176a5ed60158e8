"""The report's sections for whoever trains on the run: row length against max_length, trained
share per row, reward spread and mixed groups, and the per-task table with its trajectory pages."""

from __future__ import annotations

import re
import subprocess
import sys
from html import unescape

import pytest

from factory.report import load_run, write_report
from factory.report.data import file_query, run_settings
from factory.report.trajectories import page_name
from factory.warehouse import Warehouse
from tests.report.reading import sections, table_rows
from tests.report.sample import RUN_ID, finished_run
from tests.warehouse import sample


@pytest.fixture(scope="module")
def page(db, tmp_path_factory) -> dict[str, str]:
    return sections(write_report(db, "r1", tmp_path_factory.mktemp("out")).read_text())


def test_kept_rows_lengths_are_counted_against_the_run_s_max_length(page):
    caption = unescape(page["row_lengths"])
    assert "max_length = 32.8k: the length filter's limit" in caption
    assert "A trainer cuts a row over it: 1 of 4 rows (25%) are." in caption
    assert "Shortest 1.2k, median 9k, longest 40k tokens." in caption
    rows = table_rows(page["row_lengths"])
    assert rows[-1] == ["over max_length (32.8k)", "1", "25%"]
    assert sum(int(r[1]) for r in rows[:-1]) == 4  # every row in one bin
    assert '<img src="row_lengths.png"' in page["row_lengths"]


def test_trained_share_is_each_row_s_assistant_tokens_over_its_tokens(page):
    assert "5.7k of 52.7k tokens are trained (11%)" in page["trained_share"]
    assert table_rows(page["trained_share"]) == [["10%-15%", "2", "50%"], ["20%-25%", "1", "25%"],
                                                 ["25%-30%", "1", "25%"]]


def test_reward_spread_and_mixed_groups_are_the_queries_own(page):
    # groups of r1 with 2+ graded attempts: easy/A 1,1; hard/A 0,0; mid/A 1,0; mid/B 1,1; mid2/B 1,0,0
    last = table_rows(page["reward_spread"])[-1]
    assert last[1:] == ["5", f"{(0.5 + (2 / 9) ** 0.5) / 5:.3f}", "2 (40%)"]
    assert "Over the run: 2 of 5 groups mixed (40%)." in page["mixed_groups"]
    assert table_rows(page["mixed_groups"]) == [["(all)", "5", "2", "40%", f"{(0.5 + (2 / 9) ** 0.5) / 5:.3f}", "2", "1"],
                                                ["A", "3", "1", "33%", f"{0.5 / 3:.3f}", "1", "1"],
                                                ["B", "2", "1", "50%", f"{(2 / 9) ** 0.5 / 2:.3f}", "1", "0"]]


def test_the_per_task_table_counts_each_task(page):
    rows = {r[0]: r for r in table_rows(page["tasks"])}
    assert rows["mid"][:5] == ["mid", "4", "3/4", "2", "75%"]
    assert rows["spare"][:5] == ["spare", "0", "0/0", "0", "-"]
    assert "No trajectory pages: the run&#x27;s dataset has no tokenized rows" in page["tasks"]


@pytest.mark.parametrize(("pipeline", "max_length", "template"), [
    ("name: demo\n", 32768, "qwen3"),  # the length filter's default
    ("name: demo\nfilters:\n  length: {max_tokens: 4096}\noutput: {template: chatml}\n", 4096, "chatml"),
    ("name: demo\nfilters:\n  length: {enabled: false}\n", None, "qwen3"),
    ("name: demo\nfilters: [not, a, mapping]\n", None, "qwen3"),
])
def test_max_length_is_the_length_limit_of_the_pipeline_the_run_recorded(tmp_path, pipeline, max_length, template):
    db = tmp_path / "warehouse.duckdb"
    with Warehouse(db) as wh:
        wh.start_run("r", "demo", pipeline, "factory run")
    settings = run_settings(file_query(db), "r")
    assert (settings.max_length, settings.template) == (max_length, template)
    assert load_run(file_query(db), "r").max_length == max_length


def test_a_run_without_a_length_limit_says_the_trainer_decides(tmp_path):
    db = tmp_path / "warehouse.duckdb"
    with Warehouse(db) as wh:
        wh.start_run("r", "demo", "name: demo\nfilters:\n  length: {enabled: false}\n", "factory run")
        wh.record_attempt(sample.attempt("r", "t1", "A", 0, "pass"), started_at=sample.T0, finished_at=sample.T0,
                          kept=True)
        wh.record_token_counts("r", [{"instance_id": "t1", "teacher": "A", "attempt": 0, "num_tokens": 900,
                                      "assistant_tokens": 90, "tokens_exact": True}])
    found = sections(write_report(db, "r", tmp_path / "out").read_text())
    assert "The run has no max_length: its length filter is off" in unescape(found["row_lengths"])
    assert all("over max_length" not in r[0] for r in table_rows(found["row_lengths"]))


def test_trajectory_pages_are_the_dataset_s_rows_with_trained_text_marked(built_run, tmp_path):
    out = write_report(built_run.warehouse_path, built_run.run_id, tmp_path / "report", built_run.dataset_dir)
    found = sections(out.read_text())
    links = re.findall(r'<a href="([^"]+)">', found["tasks"])
    kept = sum(int(r[3]) for r in table_rows(found["tasks"]))
    assert kept and len(links) == kept  # one link per kept row
    for href in links:
        trajectory = (out.parent / unescape(href)).read_text()
        marked = re.findall(r'<span class="trained">⟦(.*?)⟧</span>', trajectory, re.S)
        assert marked and "<|im_start|>assistant" not in "".join(marked)  # the role header is masked
        assert '<span class="masked">&lt;|im_start|&gt;system' in trajectory
    assert sorted(p.name for p in (out.parent / "trajectories").iterdir()) == sorted(h.split("/")[1] for h in links)


def test_a_report_written_again_holds_only_the_dataset_s_pages(built_run, tmp_path):
    stale = tmp_path / "report" / "trajectories" / "gone.html"
    stale.parent.mkdir(parents=True)
    stale.write_text("an earlier build's row")
    write_report(built_run.warehouse_path, built_run.run_id, tmp_path / "report", built_run.dataset_dir)
    assert not stale.exists()


def test_page_names_keep_apart_ids_that_differ_only_in_unsafe_characters():
    assert page_name("a/b", "t", 0) != page_name("a_b", "t", 0)
    assert re.fullmatch(r"[A-Za-z0-9_.-]+\.html", page_name("org/repo#1 x", "claude:opus", 3))


def test_a_rebuild_s_length_limit_is_the_one_the_report_reads(tmp_path):
    """`factory build --max-tokens` cuts the dataset with another limit than the pipeline's: the
    warehouse records the build's settings, and the report measures rows against those."""
    store = finished_run(tmp_path)
    before = run_settings(file_query(store.warehouse_path), RUN_ID).max_length
    out = subprocess.run([sys.executable, "-m", "factory.cli", "build", str(store.folder), "--max-tokens", "50000"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert (before, run_settings(file_query(store.warehouse_path), RUN_ID).max_length) == (32768, 50000)
    [(command,)] = file_query(store.warehouse_path)("SELECT command FROM builds WHERE run_id = ?", [RUN_ID]).rows
    assert command.endswith("--max-tokens 50000")
