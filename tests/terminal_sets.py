"""Terminal task sets (Harbor's format) for the tests that run them on the real engine."""

from __future__ import annotations

from pathlib import Path

from factory.records import Task
from factory.sandbox.backend import sandbox_backend
from factory.tasks import load_taskset

ROOT = Path(__file__).parents[1]
DEMO_TERMINAL = ROOT / "pipelines" / "tasksets" / "demo-terminal"
HARBOR_HELDOUT = ROOT / "tests" / "fixtures" / "harbor-heldout"


def built_tasks(folder: Path) -> dict[str, Task]:
    """The task set's tasks by id, each task's image built from its Dockerfile (missing ones only)."""
    loaded = load_taskset(str(folder)).tasks
    sandbox_backend("docker").build_dockerfile_images(loaded)
    return {t.instance_id: t for t in loaded}
