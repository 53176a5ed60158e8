"""Fixtures of the sandbox tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory.sandbox.images import ensure_images
from factory.tasks import load_tasks
from factory.tasks.config import TasksConfig

DEMO = Path(__file__).parents[2] / "pipelines/tasksets/demo"


@pytest.fixture(scope="module")
def task(docker_client):
    """A demo task whose bug patch changes a library file and whose failing tests are hidden."""
    tasks = [t for t in load_tasks(TasksConfig(source=str(DEMO))).tasks if t.start.bug_patch and t.start.hide_paths]
    ensure_images(tasks[:1], DEMO)
    return tasks[0]
