"""Shared fixtures. Tests that need Docker use the real engine that `make test` ensures."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid

import docker
import pytest

BASE_IMAGE = "factory/python:3.11"
SESSION_LABEL = "factory.test-session"
SESSION = uuid.uuid4().hex[:12]
# everything factory creates during the suite, in this process and in every factory it starts,
# carries this session's label, so the session's end can count what was left behind
os.environ["FACTORY_LABELS"] = f"{SESSION_LABEL}={SESSION}"


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
    script = "import json, sys; from factory.sandbox.docker.engine import labels; print(json.dumps(labels(*sys.argv[1:])))"
    out = subprocess.run([sys.executable, "-c", script, run_id, attempt_id], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def pytest_sessionfinish(session, exitstatus):
    """Nothing left behind: when the suite ends, no container made during it may remain. Any that
    does is named, removed, and fails the session."""
    try:
        client = docker.from_env()
        left = client.api.containers(all=True, filters={"label": f"{SESSION_LABEL}={SESSION}"})
    except docker.errors.DockerException:
        return  # no engine: nothing can have been left on it
    if not left:
        return
    names = ", ".join(f"{c['Labels'].get('factory.run')}/{c['Labels'].get('factory.attempt')} ({c['State']})"
                      for c in left)
    sys.stderr.write(f"\n{len(left)} container(s) made by the tests were left on the engine: {names}\n")
    for container in left:
        with contextlib.suppress(docker.errors.DockerException):
            client.api.remove_container(container["Id"], force=True)
    session.exitstatus = 1
