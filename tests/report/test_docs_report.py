"""The example in docs/report.md runs and prints what the page says."""

from tests.docs_examples import run_examples


def test_the_example_in_the_report_page_runs_as_shown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_examples("report.md") == 1
