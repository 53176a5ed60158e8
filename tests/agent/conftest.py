"""Teachers pointed at the local API stand-in, a host-folder sandbox, and the demo tasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory.records import Task
from factory.tasks import load_taskset
from tests.agent.local_sandbox import DEMO, LocalSandbox
from tests.teachers.conftest import claude, fake_api, gpt  # noqa: F401 - the same stand-in and teachers

REPO = {
    "calc/__init__.py": "from calc.ops import add\n",
    "calc/ops.py": "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n",
    "README.md": "calc\n",
}


@pytest.fixture(scope="session")
def demo_tasks() -> dict[str, Task]:
    return {t.instance_id: t for t in load_taskset(str(DEMO)).tasks}


@pytest.fixture
def task() -> Task:
    return Task(
        instance_id="calc__add",
        repo="toy/calc",
        image="none",
        problem_statement="`add(2, 3)` returns -1 instead of 5.",
    )


@pytest.fixture
def local(tmp_path: Path) -> LocalSandbox:
    return LocalSandbox.with_files(tmp_path, REPO)


