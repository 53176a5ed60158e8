"""The example in docs/interchange.md runs and prints what the page says it prints."""

from tests.docs_examples import run_examples


def test_the_example_in_the_interchange_page_runs_as_shown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_examples("interchange.md") == 1
