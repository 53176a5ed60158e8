"""The example in docs/warehouse.md runs and prints what the page says; the page names every query."""

from pathlib import Path

from factory.warehouse import named_queries
from tests.docs_examples import run_examples

DOC = Path(__file__).parents[2] / "docs" / "warehouse.md"


def test_the_example_in_the_warehouse_page_runs_as_shown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_examples("warehouse.md") == 1


def test_the_page_explains_every_named_query():
    text = DOC.read_text()
    for name in named_queries():
        assert f"**{name}**" in text, name
