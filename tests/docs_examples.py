"""Run the Python examples of a docs page; each block followed by a ```text block must print it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOCS = Path(__file__).parents[1] / "docs"


def run_examples(page: str) -> int:
    """Execute the page's ```python blocks in one namespace, in order; returns how many outputs matched."""
    doc = DOCS / page
    blocks = re.findall(r"```([\w ]*)\n(.*?)```", doc.read_text(), re.S)
    namespace: dict = {"__name__": "docs_example"}
    checked = 0
    for i, (lang, code) in enumerate(blocks):
        if lang.strip() != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{doc}:block{i}", "exec"), namespace)
        if i + 1 < len(blocks) and blocks[i + 1][0].strip() == "text":
            assert out.getvalue() == blocks[i + 1][1], f"{page} block {i}"
            checked += 1
    return checked
