"""Shared fixtures. Tests that need Docker use the real engine that `make test` ensures."""

from __future__ import annotations

import json
import subprocess
import sys

import docker
import pytest

BASE_IMAGE = "factory/python:3.11"


@pytest.fixture(scope="session")
def docker_client() -> docker.DockerClient:
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:  # fail, never skip: CI must run these
        pytest.fail(f"no Docker engine answers ({exc}); run `make docker`", pytrace=False)
    try:
        client.images.get(BASE_IMAGE)
    except docker.errors.ImageNotFound:
        pytest.fail(f"{BASE_IMAGE} is missing; run `make images`", pytrace=False)
    return client


def dead_owner_labels(run_id: str, attempt_id: str = "a1") -> dict[str, str]:
    """Factory labels as a process that has since exited wrote them (its pid and start time)."""
    script = "import json, sys; from factory.sandbox.engine import labels; print(json.dumps(labels(*sys.argv[1:])))"
    out = subprocess.run([sys.executable, "-c", script, run_id, attempt_id], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)
