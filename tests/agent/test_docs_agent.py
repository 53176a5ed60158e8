"""The example in docs/agent.md runs, in a real sandbox, and prints what the page says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "agent.md"


def test_the_example_in_the_agent_page_runs_as_shown(docker_client, monkeypatch):
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```(\w*)\n(.*?)```", DOC.read_text(), re.S)
    ((code, shown),) = [
        (code, blocks[i + 1][1])
        for i, (lang, code) in enumerate(blocks)
        if lang == "python" and "asyncio.run" in code
    ]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"{DOC}:example", "exec"), {"__name__": "docs_example"})
    assert out.getvalue() == shown
