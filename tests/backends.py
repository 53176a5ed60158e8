"""The sandbox backends a test runs on: Docker always (its absence fails), Podman where `make
podman` set rootless Podman up (elsewhere each test skips with one line saying why)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from factory.errors import SandboxError
from factory.protocols import SandboxBackend
from factory.sandbox.backend import sandbox_backend
from factory.sandbox.docker import engine
from tests.conftest import BASE_IMAGE

BACKENDS = ["docker", "podman"]


@pytest.fixture(params=BACKENDS)
def backend(request, docker_client) -> Iterator[SandboxBackend]:
    """Each backend in turn; the shared engine client is Docker's again afterwards, for the tests
    that make `DockerSandbox`es themselves."""
    chosen = sandbox_backend(request.param)
    try:
        present = chosen.image_exists(BASE_IMAGE)  # the first call connects, and Podman checks its kernel
    except SandboxError as exc:
        engine.connect(None)
        if request.param == "docker":
            raise
        pytest.skip(f"{exc}; run `make podman`")
    if not present:
        engine.connect(None)
        pytest.skip(f"{BASE_IMAGE} is not in {request.param}'s store; run `make podman-images`")
    try:
        yield chosen
    finally:
        engine.connect(None)
