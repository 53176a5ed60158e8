"""The examples in docs/dataset.md run, and print what the page says they print."""

from pathlib import Path

import datasets

from tests.docs_examples import run_examples

DOC = Path(__file__).parents[2] / "docs" / "dataset.md"


def test_the_examples_in_the_dataset_page_run_as_shown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    assert run_examples("dataset.md") == 5
