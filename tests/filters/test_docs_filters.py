"""The examples in docs/filters.md run, and print what the page says they print."""

from pathlib import Path

from tests.docs_examples import run_examples

DOC = Path(__file__).parents[2] / "docs" / "filters.md"


def test_the_examples_in_the_filters_page_run_as_shown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_examples("filters.md") == 2
