"""DockerSandbox against the real engine: lifecycle, isolation, limits, crashes, cleanup."""

from __future__ import annotations

import asyncio
import os
import uuid

import pytest

from factory.config import SandboxConfig
from factory.errors import SandboxCrashed
from factory.records import StartState
from factory.sandbox.docker import DockerSandbox, engine
from tests.conftest import BASE_IMAGE, dead_owner_labels

pytestmark = pytest.mark.docker

REPO = {"pkg/__init__.py": "def add(a, b):\n    return a + b\n", "README.md": "demo\n"}


async def make_sandbox(config: SandboxConfig | None = None, **kwargs) -> DockerSandbox:
    sandbox = await DockerSandbox.create(BASE_IMAGE, config or SandboxConfig(), workdir="/testbed", **kwargs)
    await sandbox.exec("mkdir -p /testbed", user="root", workdir="/")
    for path, text in REPO.items():
        await sandbox.write_file(f"/testbed/{path}", text, owner="root")
    return sandbox


@pytest.fixture
async def sandbox(docker_client):
    sb = await make_sandbox()
    await sb.prepare(StartState())
    yield sb
    await sb.close()


def containers_labelled(docker_client, key: str, value: str) -> list:
    """One list call (no inspect per container, which a removal in flight would fail with a 404)."""
    return docker_client.api.containers(all=True, filters={"label": f"{key}={value}"})


async def test_start_exec_diff_close(sandbox, docker_client):
    assert sandbox.user == "agent"
    assert (await sandbox.diff()) == ""
    result = await sandbox.exec("whoami && pwd && git log --oneline | wc -l")
    assert result.exit_code == 0
    assert result.output.split() == ["agent", "/testbed", "1"]

    await sandbox.exec("sed -i 's/a + b/a - b/' pkg/__init__.py && echo new > notes.txt")
    await sandbox.write_file("pkg/extra.py", "X = 1\n")
    await sandbox.exec("printf '\\x00\\x01' > blob.bin")
    diff = await sandbox.diff()
    assert "-    return a + b\n+    return a - b" in diff
    assert "diff --git a/notes.txt b/notes.txt\nnew file mode 100644" in diff
    assert "+X = 1" in diff
    assert "GIT binary patch" in diff  # binary files reported, not silently dropped
    assert (await sandbox.exec("git status --porcelain")).output.count("??") == 3  # agent's index untouched

    assert await sandbox.read_file("pkg/extra.py") == b"X = 1\n"
    assert "pkg/" in await sandbox.list_files(".")
    with pytest.raises(FileNotFoundError):
        await sandbox.read_file("missing.py")

    name = docker_client.api.inspect_container(sandbox.container.id)["Name"]
    await sandbox.close()
    await sandbox.close()  # idempotent
    assert docker_client.api.containers(all=True, filters={"name": name}) == []


async def test_start_state_applies_bug_hides_files_and_drops_history():
    sb = await make_sandbox()
    try:
        await sb.exec("cd /testbed && git init -q && git add -A && git -c user.name=a -c user.email=a@b commit -qm orig",
                      user="root", workdir="/")
        bug = (
            "diff --git a/pkg/__init__.py b/pkg/__init__.py\n--- a/pkg/__init__.py\n+++ b/pkg/__init__.py\n"
            "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a + b\n+    return a * b\n"
        )
        await sb.prepare(StartState(bug_patch=bug, hide_paths=["README.md"]))
        assert b"a * b" in await sb.read_file("pkg/__init__.py")
        assert "README.md" not in await sb.list_files(".")
        log = await sb.exec("git log --all --oneline")
        assert log.output.strip().count("\n") == 0 and "start state" in log.output  # the fix is not in history
        assert await sb.diff() == ""
    finally:
        await sb.close()


async def test_timeout_kills_the_command_and_its_children_and_the_sandbox_stays_usable(sandbox):
    result = await sandbox.exec("sleep 300 & (sleep 300 &); echo started; sleep 300", timeout=2)
    assert result.timed_out and result.exit_code is None
    assert "started" in result.output
    ps = await sandbox.exec("pgrep -c -u agent -x sleep || true")
    assert ps.output.strip() == "0"
    assert (await sandbox.exec("echo ok")).output == "ok\n"


async def test_output_flood_is_truncated_with_a_marker():
    sb = await make_sandbox(SandboxConfig(output_limit_bytes=4096))
    try:
        result = await sb.exec("seq 1 60000", timeout=60)
        assert result.exit_code == 0
        assert result.truncated_bytes > 300_000
        assert f"[... {result.truncated_bytes} bytes of output cut ...]" in result.output
        assert result.output.startswith("1\n2\n3\n") and result.output.endswith("59999\n60000\n")
        assert len(result.output) < 4096 + 100
        flood = await sb.exec("yes", timeout=120)
        assert flood.exit_code is None and not flood.timed_out
        assert "killed: more than" in flood.output
        assert len(flood.output) < 4096 + 200
        assert (await sb.exec("echo ok")).exit_code == 0
    finally:
        await sb.close()


async def test_network_is_off_by_default(sandbox):
    probe = "python -c \"import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)\""
    result = await sandbox.exec(probe, timeout=20)
    assert result.exit_code != 0
    assert "Network is unreachable" in result.output
    assert (await sandbox.exec("ls /sys/class/net")).output.split() == ["lo"]


async def test_host_environment_never_reaches_the_sandbox(monkeypatch, sandbox):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host-secret-123")
    fresh = await make_sandbox()
    try:
        env = (await fresh.exec("env; cat /proc/1/environ | tr '\\0' '\\n'", user="root")).output
        assert "sk-ant-host-secret" not in env
        assert set(os.environ) & {line.split("=")[0] for line in env.splitlines()} <= {
            "PATH", "HOME", "HOSTNAME", "LANG", "PWD", "SHLVL", "_", "PYTHONDONTWRITEBYTECODE", "OLDPWD", "TERM",
        }
    finally:
        await fresh.close()


async def test_agent_user_has_no_capabilities_and_cannot_escalate(sandbox):
    caps = await sandbox.exec("grep -E 'Cap(Eff|Prm)' /proc/self/status")
    assert all(line.split()[1] == "0000000000000000" for line in caps.output.splitlines())
    nnp = await sandbox.exec("grep NoNewPrivs /proc/self/status")
    assert nnp.output.split()[1] == "1"


async def test_root_s_setgid_on_a_folder_of_another_group_holds(sandbox):
    done = await sandbox.exec("mkdir /srv/shared && chown nobody:nogroup /srv/shared && chmod 2775 /srv/shared "
                              "&& stat -c %a /srv/shared", user="root")
    assert done.output.split() == ["2775"], done.output


async def test_memory_hog_is_a_recorded_failure_not_a_crash():
    sb = await make_sandbox(SandboxConfig(memory="256m"))
    try:
        result = await sb.exec("python -c 'x = bytearray(1024**3)'", timeout=60)
        assert result.exit_code == 137
        assert "[killed: out of memory]" in result.output
        assert (await sb.exec("echo alive")).output == "alive\n"
    finally:
        await sb.close()


async def test_fork_bomb_hits_the_pids_limit_and_leaves_nothing_behind():
    sb = await make_sandbox(SandboxConfig(pids_limit=64))
    try:
        foreground = await sb.exec(":(){ :|: ; }; :", timeout=5)
        assert foreground.timed_out or foreground.exit_code != 0
        await sb.exec(":(){ :|:& }; :", timeout=5)
        left = await sb.exec("pgrep -c -u agent -x bash || true")
        assert left.output.strip() == "1"  # only the bash running this very command
        assert (await sb.exec("echo alive")).output == "alive\n"
    finally:
        await sb.close()


async def test_a_container_killed_mid_attempt_raises_the_typed_error(sandbox, docker_client):
    running = asyncio.create_task(sandbox.exec("sleep 60", timeout=120))
    await asyncio.sleep(1)
    docker_client.containers.get(sandbox.container.id).kill()
    with pytest.raises(SandboxCrashed) as crash:
        await running
    assert not crash.value.by_agent and "from outside" in str(crash.value)  # infrastructure
    with pytest.raises(SandboxCrashed):
        await sandbox.exec("echo after")


async def test_cancelling_an_attempt_leaves_no_container(docker_client):
    created: list[DockerSandbox] = []

    async def attempt():
        sb = await make_sandbox(run_id="cancel-test")
        created.append(sb)
        try:
            await sb.exec("sleep 60", timeout=120)
        finally:
            await sb.close()

    task = asyncio.create_task(attempt())
    while not created:
        await asyncio.sleep(0.1)
    await asyncio.sleep(1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert containers_labelled(docker_client, engine.LABEL_RUN, "cancel-test") == []


def test_factory_clean_removes_labelled_leftovers(docker_client):
    import subprocess
    import sys

    # run ids of this invocation alone: other Docker work on the engine neither counts nor interferes
    dead_run, live_run = f"clean-test-{uuid.uuid4().hex[:8]}", f"clean-test-live-{uuid.uuid4().hex[:8]}"
    labels = dead_owner_labels(dead_run)
    docker_client.containers.run(BASE_IMAGE, ["sleep", "600"], detach=True, labels=labels, network_mode="none")
    live = engine.labels(live_run, "a2")  # owned by this (live) process: spared without --all
    docker_client.containers.run(BASE_IMAGE, ["sleep", "600"], detach=True, labels=live, network_mode="none")
    try:
        out = subprocess.run([sys.executable, "-m", "factory.cli", "clean"], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert containers_labelled(docker_client, engine.LABEL_RUN, dead_run) == []
        assert len(containers_labelled(docker_client, engine.LABEL_RUN, live_run)) == 1
        out = subprocess.run([sys.executable, "-m", "factory.cli", "clean", "--run-id", live_run],
                             capture_output=True, text=True)
        assert "removed 1 container" in out.stdout
        assert containers_labelled(docker_client, engine.LABEL_RUN, live_run) == []
    finally:
        for run_id in (dead_run, live_run):
            engine.remove_containers(run_id=run_id, everything=True)


def test_a_resumed_run_reaps_the_orphans_of_its_crashed_process(docker_client):
    import subprocess
    import sys

    script = (
        "import asyncio, os\n"
        "from factory.config import SandboxConfig\n"
        "from factory.sandbox.docker import DockerSandbox\n"
        "async def main():\n"
        f"    await DockerSandbox.create('{BASE_IMAGE}', SandboxConfig(), workdir='/', run_id='crashy')\n"
        "    os._exit(9)  # crash without closing\n"
        "asyncio.run(main())\n"
    )
    subprocess.run([sys.executable, "-c", script], check=False)
    assert len(containers_labelled(docker_client, engine.LABEL_RUN, "crashy")) == 1
    assert engine.reap_run("crashy") == 1
    assert containers_labelled(docker_client, engine.LABEL_RUN, "crashy") == []
