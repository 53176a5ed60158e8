"""Smoke test of the base sandbox image that `make images` builds without a registry."""

import pytest

from tests.conftest import BASE_IMAGE

pytestmark = pytest.mark.docker


def test_base_image_runs_pytest_with_networking_off(docker_client):
    out = docker_client.containers.run(
        BASE_IMAGE, ["python", "-m", "pytest", "--version"], network_mode="none", remove=True,
        stdout=True, stderr=True,
    )
    assert b"pytest 7." in out


def test_base_image_has_the_tools_sandboxes_use(docker_client):
    script = "python --version && git --version && patch --version | head -1 && id -u agent"
    out = docker_client.containers.run(
        BASE_IMAGE, ["bash", "-c", script], network_mode="none", remove=True
    ).decode()
    assert "Python 3.11" in out
    assert "git version" in out
    assert "GNU patch" in out
    assert out.strip().splitlines()[-1] == "1000"


def test_network_is_really_off(docker_client):
    script = "python -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)\""
    container = docker_client.containers.run(
        BASE_IMAGE, ["bash", "-c", script], network_mode="none", detach=True
    )
    try:
        assert container.wait(timeout=60)["StatusCode"] != 0
        assert b"Network is unreachable" in container.logs()
    finally:
        container.remove(force=True)
