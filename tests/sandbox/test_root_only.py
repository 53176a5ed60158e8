"""Sandboxes on SWE-smith-layout images: root is the only user, bytecode is written, no .gitignore.

Also how a dead container is told apart: the agent's own doing, or infrastructure.
"""

from __future__ import annotations

import asyncio
import uuid

import docker
import pytest

from factory.config import SandboxConfig
from factory.errors import EngineError, EngineGone, SandboxCrashed
from factory.records import StartState
from factory.sandbox.docker import DockerSandbox, engine
from tests.swesmith_layout import ensure_image

pytestmark = pytest.mark.docker

CONDA = "source /opt/miniconda3/bin/activate && conda activate testbed"


@pytest.fixture(scope="module")
def image(docker_client) -> str:
    return ensure_image()


@pytest.fixture
async def sandbox(image):
    sb = await DockerSandbox.create(image, SandboxConfig(), run_id=f"root-only-{uuid.uuid4().hex[:6]}")
    await sb.prepare(StartState())
    yield sb
    await sb.close()


async def test_an_agent_user_is_made_on_an_image_that_has_only_root(sandbox):
    assert (sandbox.user, sandbox.uid) == ("agent", 1000)
    who = await sandbox.exec("id -un; echo $HOME; touch mine && stat -c %U mine && rm mine")
    assert who.output.split() == ["agent", "/home/agent", "agent"]
    # the keepalive is the container's own command, known from its start line, not a guess
    keepalive = await sandbox.exec(f"cat /proc/{sandbox.keepalive_pid}/cmdline | tr '\\0' ' '", user="root")
    assert keepalive.output.startswith("sleep ")
    await sandbox.write_file("notes.txt", "x")
    assert (await sandbox.exec("stat -c %U notes.txt")).output.strip() == "agent"


async def test_root_when_the_pipeline_says_so(image):
    async with await DockerSandbox.create(image, SandboxConfig(user="root")) as sb:
        await sb.prepare(StartState())
        assert (await sb.exec("id -u")).output.strip() == "0"
        assert (await sb.exec("sleep 60 & echo started")).exit_code == 0
        assert (await sb.exec("pgrep -c sleep")).output.strip() == "1"  # leftovers killed, keepalive spared


async def test_bytecode_and_build_artifacts_never_enter_the_diff(sandbox):
    tracked = (await sandbox.exec("git ls-files")).output
    assert "__pycache__" not in tracked and ".egg-info" not in tracked  # not in the start state either
    run_tests = await sandbox.exec(f"{CONDA} && python -m pytest -q -p no:cacheprovider tests | tail -n 1")
    assert "passed" in run_tests.output
    litter = (
        "PYTHONDONTWRITEBYTECODE= python3 -m compileall -q . >/dev/null; "  # bytecode, even when asked for
        "mkdir -p .pytest_cache/v new.egg-info && touch .pytest_cache/v/x new.egg-info/PKG-INFO; "
        "find . -path ./.git -prune -o -name '__pycache__' -print | head -n 1 | xargs rm -rf; "  # an old one removed
        "echo 'NOTE = 1' >> $(git ls-files '*.py' | grep -v test | head -n 1)"
    )
    await sandbox.exec(litter)
    assert (await sandbox.exec("find . -name '*.pyc' | wc -l")).output.strip() != "0"
    diff = await sandbox.diff()
    assert "+NOTE = 1" in diff
    assert "__pycache__" not in diff and ".pyc" not in diff and "egg-info" not in diff
    assert "GIT binary patch" not in diff and ".pytest_cache" not in diff
    assert diff.count("diff --git") == 1


async def test_sandboxes_started_together_all_know_their_user_and_keepalive(image):
    sandboxes = await asyncio.gather(*(DockerSandbox.create(image, SandboxConfig(), run_id="root-only-many")
                                       for _ in range(12)))
    try:
        outputs = await asyncio.gather(*(sb.exec("id -un", workdir="/") for sb in sandboxes))
        assert [o.output.strip() for o in outputs] == ["agent"] * 12
        assert all(sb.keepalive_pid != "0" for sb in sandboxes)
        again = await asyncio.gather(*(sb.exec("true", workdir="/") for sb in sandboxes))  # nobody killed its keepalive
        assert all(r.exit_code == 0 for r in again)
    finally:
        await asyncio.gather(*(sb.close() for sb in sandboxes))


async def test_an_agent_that_kills_its_own_sandbox_is_told_apart_from_infrastructure(image, docker_client):
    async with await DockerSandbox.create(image, SandboxConfig(user="root")) as sb:
        with pytest.raises(SandboxCrashed) as own:
            await sb.exec("kill -9 -1; sleep 5", workdir="/")  # as root: the keepalive too
            await sb.exec("true", workdir="/")
        assert own.value.by_agent

    async with await DockerSandbox.create(image, SandboxConfig()) as sb:
        remover = asyncio.create_task(asyncio.to_thread(_remove_later, docker_client, sb.container.id))
        with pytest.raises(SandboxCrashed) as outside:
            await sb.exec("sleep 600", workdir="/")
        await remover
        assert not outside.value.by_agent
        assert "from outside" in str(outside.value)


def _remove_later(client: docker.DockerClient, container_id: str) -> None:
    import time

    time.sleep(1.5)
    client.api.remove_container(container_id, force=True)


async def test_engine_errors_are_typed_as_infrastructure_wherever_they_happen(image, docker_client):
    with pytest.raises(EngineGone):
        await engine.call(engine.client().api.inspect_container, f"no-such-{uuid.uuid4().hex}")
    unreachable = docker.APIClient(base_url=f"unix:///tmp/no-engine-{uuid.uuid4().hex}.sock", version="1.41", timeout=2)
    with pytest.raises(EngineError):
        await engine.call(unreachable.version)

    sb = await DockerSandbox.create(image, SandboxConfig())
    docker_client.api.remove_container(sb.container.id, force=True)
    for use in (lambda: sb.write_file("/tmp/x", "x"), lambda: sb.read_file("/etc/hostname"), lambda: sb.diff()):
        sb.closed = False
        with pytest.raises(SandboxCrashed) as gone:
            await use()
        assert not gone.value.by_agent
    await sb.close()


async def test_the_start_state_holds_no_bytecode_of_the_code_as_it_was(image, docker_client):
    """The image's own test run compiled the original code and the tests: the bytecode of a
    hidden test file names its tests and expected values, the library's holds the fix."""
    before = docker_client.containers.run(image, ["sh", "-c", "grep -rl --binary-files=text test_prereleases_are_excluded "
                                                  "/testbed --include='*.pyc'; ls -d /testbed/.pytest_cache"], remove=True,
                                          labels={"factory": "1", "factory.run": "test-root-only"})
    assert b".pyc" in before and b".pytest_cache" in before  # the image has them
    async with await DockerSandbox.create(image, SandboxConfig()) as sb:
        await sb.prepare(StartState(hide_paths=["tests/test_ranges.py"]))
        left = await sb.exec("cd /testbed && find . -name '*.py[co]' -o -name .pytest_cache -o -name __pycache__; "
                             "grep -rl --binary-files=text test_prereleases_are_excluded . --exclude-dir=.git; ls -d *.egg-info", user="root")
        assert left.output.split() == ["semverkit.egg-info"], left.output
