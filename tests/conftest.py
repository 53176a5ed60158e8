"""Shared fixtures. Tests that need Docker use the real engine that `make test` ensures."""

from __future__ import annotations

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
