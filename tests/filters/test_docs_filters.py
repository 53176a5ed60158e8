"""The examples in docs/filters.md run, and print what the page says they print."""

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).parents[2] / "docs" / "filters.md"


def test_the_examples_in_the_filters_page_run_as_shown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```(\w*)\n(.*?)```", DOC.read_text(), re.S)
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
    assert checked == 2
