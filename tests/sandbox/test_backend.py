"""The sandbox backend seam: the core reaches a backend by name only, and a name no one
registered is refused where it is given, with the valid names."""

from __future__ import annotations

import ast
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from pydantic import ValidationError

from factory.config import parse_pipeline
from factory.errors import ConfigError, UsageError
from factory.records import StartState
from factory.sandbox.backend import BACKENDS, sandbox_backend
from factory.sandbox.config import SandboxConfig
from factory.sandbox.pool import SandboxPool
from tests.conftest import BASE_IMAGE

ROOT = Path(__file__).parent.parent.parent
DOCKER_PACKAGE = ROOT / "factory" / "sandbox" / "docker"
BACKEND_MODULE = "factory.sandbox.docker"
ENGINE_API_BACKENDS = [ROOT / "factory" / "sandbox" / "podman"]
"""Backends that speak the Docker Engine API through the Docker backend's code (rootless Podman's
compatible socket): they may import the Docker backend, never docker-py itself."""


def imported(tree: ast.AST) -> set[str]:
    """Every module a source's import statements name (`from a import b` names a and a.b)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _docker_py(module: str) -> bool:
    return module == "docker" or module.startswith("docker.")


def talks_to_docker(module: str) -> bool:
    return module == "docker" or module.startswith("docker.") or module == BACKEND_MODULE \
        or module.startswith(BACKEND_MODULE + ".")


def test_only_the_docker_backend_imports_docker_py_or_the_docker_backend():
    offenders = {}
    for path in sorted((ROOT / "factory").rglob("*.py")):
        if path.is_relative_to(DOCKER_PACKAGE):
            continue
        speaks_its_api = any(path.is_relative_to(p) for p in ENGINE_API_BACKENDS)
        found = sorted(m for m in imported(ast.parse(path.read_text(), str(path)))
                       if talks_to_docker(m) and not (speaks_its_api and not _docker_py(m)))
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert offenders == {}


def test_the_walk_sees_every_form_of_import_it_forbids():
    sources = ["import docker", "from docker.errors import APIError", "from factory.sandbox import docker",
               "from factory.sandbox.docker import DockerSandbox", "from factory.sandbox.docker.engine import call",
               "def f():\n    import docker.utils"]
    for source in sources:
        assert any(talks_to_docker(m) for m in imported(ast.parse(source))), source
    assert not any(talks_to_docker(m) for m in imported(ast.parse("from factory.sandbox.backend import Rewrite")))


def test_the_docker_backend_is_found_by_name_and_is_the_default():
    assert sandbox_backend("docker").name == "docker"
    assert SandboxConfig().backend == "docker"
    assert "docker" in BACKENDS


def test_an_unknown_backend_is_refused_with_the_valid_names():
    with pytest.raises(UsageError, match=r"^unknown sandbox backend 'kubernetes'; valid: docker, podman$"):
        sandbox_backend("kubernetes")
    with pytest.raises(ValidationError, match=r"unknown sandbox backend 'kubernetes'; valid: docker, podman"):
        SandboxConfig(backend="kubernetes")


def test_an_unknown_backend_in_a_pipeline_names_its_field_and_line():
    text = "name: t\ntasks:\n  source: demo\nteachers:\n  - kind: scripted\nsandbox:\n  backend: podmn\n"
    with pytest.raises(ConfigError) as caught:
        parse_pipeline(text, "p.yaml")
    assert str(caught.value) == "p.yaml:7:12: sandbox.backend: unknown sandbox backend 'podmn'; valid: docker, podman"


@pytest.mark.parametrize("command", [
    ["verify", "--taskset", "demo", "--instance", "x", "--patch", "-"],
    ["tasks", "validate", "demo"],
    ["images", "build", "demo"],
    ["clean"],
])
def test_an_unknown_backend_on_the_command_line_is_one_line_and_exit_2(command):
    done = subprocess.run([sys.executable, "-m", "factory.cli", *command, "--backend", "podmn"],
                          capture_output=True, text=True, cwd=ROOT, input="")
    assert done.returncode == 2
    assert done.stderr == "factory: --backend: unknown sandbox backend 'podmn'; valid: docker, podman\n"


def test_run_refuses_an_unknown_backend_as_the_field_it_sets():
    done = subprocess.run([sys.executable, "-m", "factory.cli", "run", "pipelines/demo.yaml", "--backend", "podmn",
                           "--dry-run"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "--backend" in done.stderr and "unknown sandbox backend 'podmn'; valid: docker, podman" in done.stderr


class Counting:
    """A backend of this test's own: Docker's, with every sandbox it makes counted."""

    name = "counting"

    def __init__(self):
        self.made: list[str] = []
        self.inner = sandbox_backend("docker")

    async def create(self, image, config, **kwargs):
        self.made.append(image)
        return await self.inner.create(image, config, **kwargs)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.fixture
def counting(monkeypatch):
    backend = Counting()
    # registered as a backend is, for this test alone
    monkeypatch.setitem(BACKENDS._entries, "counting", lambda: backend)
    yield backend
    sandbox_backend.cache_clear()


@pytest.mark.docker
async def test_the_pool_makes_its_sandboxes_on_the_backend_its_config_names(counting, docker_client):
    run_id = f"backend-test-{uuid.uuid4().hex[:8]}"
    async with SandboxPool(SandboxConfig(backend="counting"), run_id=run_id) as pool:
        sandbox = await pool.acquire(BASE_IMAGE, StartState(), workdir="/tmp", attempt_id="a1")
        await sandbox.write_files({"made.txt": "by the counting backend\n"})
        assert "made.txt" in await sandbox.diff()
        assert sandbox.image_id.startswith("sha256:")
    assert counting.made == [BASE_IMAGE]
    assert await sandbox_backend("counting").remove_left(run_id) == 0
