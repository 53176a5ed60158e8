"""The examples in docs/dataset.md run, and print what the page says they print."""

import contextlib
import io
import re
from pathlib import Path

import datasets

DOC = Path(__file__).parents[2] / "docs" / "dataset.md"


def test_the_examples_in_the_dataset_page_run_as_shown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    blocks = re.findall(r"```([\w ]*)\n(.*?)```", DOC.read_text(), re.S)
    namespace: dict = {}
    checked = 0
    for i, (lang, code) in enumerate(blocks):
        if lang != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{DOC}:block{i}", "exec"), namespace)
        if i + 1 < len(blocks) and blocks[i + 1][0] == "text":
            assert out.getvalue() == blocks[i + 1][1]
            checked += 1
    assert checked == 4
