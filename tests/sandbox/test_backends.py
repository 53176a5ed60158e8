"""The core of the sandbox contract on every backend (tests/backends.py): start, exec, files, diff,
no network, limits, cleanup by label. The Docker-only details stay in test_docker_sandbox.py."""

from __future__ import annotations

import os
import uuid

import pytest

from factory.config import SandboxConfig
from factory.records import StartState
from tests.backends import backend  # noqa: F401 - the fixture
from tests.conftest import BASE_IMAGE

pytestmark = pytest.mark.docker

REPO = {"pkg/__init__.py": "def add(a, b):\n    return a + b\n"}


async def started(backend, config: SandboxConfig | None = None, **kwargs):  # noqa: F811
    sandbox = await backend.create(BASE_IMAGE, config or SandboxConfig(), workdir="/testbed", **kwargs)
    await sandbox.exec("mkdir -p /testbed", user="root", workdir="/")
    await sandbox.write_files({f"/testbed/{p}": t for p, t in REPO.items()}, owner="root")
    await sandbox.prepare(StartState())
    return sandbox


def limits_unenforced(backend) -> bool:  # noqa: F811
    return backend.name == "podman" and os.environ.get("FACTORY_PODMAN_LIMITS") == "unenforced"


async def test_exec_files_and_diff(backend):  # noqa: F811
    sb = await started(backend)
    try:
        assert (await sb.exec("id -un")).output.strip() == "agent"
        await sb.write_file("pkg/__init__.py", "def add(a, b):\n    return b + a\n")
        await sb.write_file("notes.txt", "new\n")
        assert (await sb.read_file("/testbed/notes.txt")) == b"new\n"
        diff = await sb.diff()
        assert "+    return b + a" in diff and "+++ b/notes.txt" in diff
        slow = await sb.exec("sleep 30", timeout=1)
        assert slow.timed_out
        assert (await sb.exec("echo still here")).output.strip() == "still here"
    finally:
        await sb.close()


async def test_no_network_and_no_capabilities(backend):  # noqa: F811
    sb = await started(backend)
    try:
        assert (await sb.exec("ls /sys/class/net")).output.split() == ["lo"]
        assert (await sb.exec("grep CapEff /proc/self/status")).output.split()[-1] == "0000000000000000"
    finally:
        await sb.close()


async def test_memory_and_pids_limits_hold(backend):  # noqa: F811
    if limits_unenforced(backend):
        pytest.skip("podman: FACTORY_PODMAN_LIMITS=unenforced, the kernel gives no cgroup limits here")
    sb = await started(backend, SandboxConfig(memory="256m", pids_limit=64))
    try:
        hog = await sb.exec("python -c 'x = bytearray(1024**3)'", timeout=60)
        assert hog.exit_code == 137 and "out of memory" in hog.output
        forks = await sb.exec("for i in $(seq 100); do sleep 5 & done; sleep 1; pgrep -c sleep", timeout=30)
        assert forks.exit_code != 0 or int(forks.output.split()[-1]) < 64
    finally:
        await sb.close()


async def test_cleanup_by_label_removes_a_dead_owners_leftovers(backend):  # noqa: F811
    run_id = f"t-{uuid.uuid4().hex[:8]}"
    sb = await started(backend, run_id=run_id)
    await sb.close()
    assert backend.remove_containers(run_id=run_id) == 0  # closed: nothing of it is left
    left = await backend.create(BASE_IMAGE, SandboxConfig(), run_id=run_id)
    try:
        assert backend.reap_run(run_id) == 0  # its owner (this process) is alive: it stays
        assert backend.remove_containers(run_id=run_id) == 1
    finally:
        await left.close()
