"""Images of local task sets: a toolchain image + a repo at /testbed + its install step.

A task-set folder holds `tasks.jsonl` and `repos/<name>/` (the clean sources), and optionally
`taskset.json` (`ImageSettings`: which toolchain image to start from, SWE-smith's root-only
layout). Each task's `repo` is `<owner>/<name>` and its `image_name` names the image built from
`repos/<name>`, one image per repo snapshot, shared by every task on that repo. No registry is
needed: the toolchain images are built from Debian's packages (scripts/build-lang-image.sh).
The plan and the install step are here; the backend (`sandbox.backend`) makes the images.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from factory.errors import UsageError
from factory.records import Record, Task
from factory.sandbox.backend import DEFAULT_BACKEND, sandbox_backend

BASE_IMAGE = "factory/python:3.11"
SETTINGS_FILE = "taskset.json"
SNAPSHOT = r"""
set -e
cd /testbed
git init -q && git add -A && git -c user.name=factory -c user.email=factory@localhost commit -q -m snapshot
"""
# A Python repo becomes importable through a .pth file written at build time (trusted), so tests
# can run under `python -I` (isolated mode, no cwd on sys.path) in the verifier.
PYTHON_IMPORTABLE = r"""
site=$(python3 -c 'import site; print(site.getsitepackages()[0])')
mkdir -p "$site" && echo /testbed > "$site/factory-testbed.pth"
python3 -c 'import sys; assert "/testbed" in sys.path'
"""
INSTALL = SNAPSHOT + PYTHON_IMPORTABLE
"""A Python repo's install step (tests/swesmith_layout.py builds on it)."""
# SWE-smith's images have root alone: the sandbox then creates the user it runs the agent as.
ROOT_ONLY = r"""
set -e
userdel -r agent 2>/dev/null || userdel agent
if getent group agent >/dev/null; then groupdel agent; fi
left=$(find / -xdev \( -uid 1000 -o -gid 1000 \) -print 2>/dev/null | head -n 5)
[ -z "$left" ] || { echo "still owned by uid/gid 1000: $left"; exit 1; }
"""


class ImageSettings(Record):
    """How a local task set's images are built: `taskset.json` beside its `tasks.jsonl`, every
    key optional (a Python task set needs none)."""

    base_image: str = BASE_IMAGE
    """The toolchain image every repo image of the set starts from: `factory/go:1`,
    `factory/node:1`, `factory/java:1`, `factory/rust:1` (`make lang-images`) or the Python base."""
    root_only: bool = False
    """SWE-smith's layout: no user but root in the image (the `agent` user of the base removed)."""


def image_settings(taskset_dir: Path) -> ImageSettings:
    path = taskset_dir / SETTINGS_FILE
    if not path.is_file():
        return ImageSettings()
    try:
        return ImageSettings.model_validate_json(path.read_text())
    except ValidationError as exc:
        raise UsageError(f"{path}: {exc}") from None


@dataclass(frozen=True)
class RepoImage:
    image: str
    repo_dir: Path
    language: str = "python"


def plan_images(tasks: list[Task], taskset_dir: Path) -> list[RepoImage]:
    """One image per distinct (image, repo) of the tasks, from `repos/<name>`."""
    plans: dict[str, RepoImage] = {}
    for task in tasks:
        repo_dir = taskset_dir / "repos" / task.repo.split("/")[-1]
        if not repo_dir.is_dir():
            raise UsageError(f"task {task.instance_id}: no sources for repo {task.repo} at {repo_dir}")
        known = plans.setdefault(task.image, RepoImage(task.image, repo_dir, task.language))
        if known.repo_dir != repo_dir:
            raise UsageError(f"image {task.image} is named by two repos ({known.repo_dir.name}, {repo_dir.name})")
    return list(plans.values())


def _tar_of(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if any(part in ("__pycache__", ".git", ".pytest_cache") for part in rel.parts):
                continue
            tar.add(path, arcname=f"testbed/{rel}", recursive=False)
    return buf.getvalue()


def install_script(plan: RepoImage, *, root_only: bool = False) -> str:
    """The install step of a repo image: root shell in its /testbed, which holds the sources."""
    return SNAPSHOT + (PYTHON_IMPORTABLE if plan.language == "python" else "") + (ROOT_ONLY if root_only else "")


def local_taskset(source: Path) -> Path | None:
    """The task-set folder (holding `repos/`) of a source, or None when its images come from elsewhere.

    A folder is its own task set; a tasks file belongs to the folder it sits in."""
    folder = source if source.is_dir() else source.parent
    return folder if (folder / "repos").is_dir() else None


def ensure_local_images(source: Path, tasks: list[Task], *, backend: str = DEFAULT_BACKEND) -> list[tuple[str, str]]:
    """Build the missing images of `tasks` when `source` is a local task set, or holds tasks with a
    Dockerfile of their own (Harbor); else nothing to do."""
    folder = local_taskset(source)
    built = sandbox_backend(backend).build_dockerfile_images(tasks)
    return built + ([] if folder is None else ensure_images([t for t in tasks if t.terminal is None], folder,
                                                               backend=backend))


def ensure_images(tasks: list[Task], taskset_dir: Path, *, rebuild: bool = False,
                  backend: str = DEFAULT_BACKEND) -> list[tuple[str, str]]:
    """Build the images of a local task set that are missing on `backend`; returns (image, built|present)."""
    settings = image_settings(taskset_dir)
    engine = sandbox_backend(backend)
    results = []
    for plan in plan_images(tasks, taskset_dir):
        if engine.image_exists(plan.image) and not rebuild:
            results.append((plan.image, "present"))
            continue
        engine.build_image(plan, settings.base_image, root_only=settings.root_only)
        results.append((plan.image, "built"))
    return results
