"""The command server (`factory.sandbox.docker.execd`) against the real engine: a command costs no engine
call, keeps every limit of a per-call exec, cannot be ended or rewritten by its own output, and a
dead container is still told apart (killed from outside: tests/sandbox/test_docker_sandbox.py)."""

from __future__ import annotations

import asyncio
import re
import uuid

import pytest

from factory.agent.tools import run_bash
from factory.config import SandboxConfig
from factory.errors import SandboxCrashed, SandboxError
from factory.records import StartState
from factory.sandbox.docker import DockerSandbox, engine
from tests.conftest import BASE_IMAGE

pytestmark = pytest.mark.docker


async def make(user: str = "agent", **config) -> DockerSandbox:
    sb = await DockerSandbox.create(BASE_IMAGE, SandboxConfig(user=user, **config), workdir="/tmp",
                                    run_id=f"execd-test-{uuid.uuid4().hex[:6]}")
    await sb.prepare(StartState())
    return sb


@pytest.fixture
async def sandbox(docker_client):
    sb = await make()
    yield sb
    await sb.close()


@pytest.fixture
def engine_requests(monkeypatch):
    """Every HTTP request the factory's Docker client sends (the engine API is HTTP)."""
    api = engine.client().api
    sent: list[str] = []
    send = api.send

    def counting(request, **kwargs):
        sent.append(f"{request.method} {request.path_url}")
        return send(request, **kwargs)

    monkeypatch.setattr(api, "send", counting)
    return sent


async def test_a_sandbox_costs_the_engine_five_requests_in_all(sandbox, engine_requests):
    """Its whole life, once its image's start image and id are known (the fixture's sandbox made
    them known): made, started, its command server's exec made and started, removed. No inspect
    after the create (docker-py's `containers.create` makes one), none after the commands."""
    made = await make()
    await made.exec("echo hi")
    await made.close()
    routes = [re.sub(r"/v[\d.]+/|/[0-9a-f]{64}|\?.*", "", request) for request in engine_requests]  # no ids
    assert routes == ["POST containers/create", "POST containers/start", "POST containers/exec", "POST exec/start",
                      "DELETE containers"], engine_requests


async def test_a_sandbox_knows_its_image_s_id_without_asking_the_engine_again(sandbox, docker_client):
    made = await make()
    try:
        assert made.image_id == sandbox.image_id == docker_client.api.inspect_container(made.container.id)["Image"]
    finally:
        await made.close()


async def test_sandboxes_started_at_once_ask_their_image_s_id_once(sandbox, engine_requests, monkeypatch):
    monkeypatch.setattr(engine, "_image_ids", {})  # as in a new process, whose sandboxes all start together
    made = await asyncio.gather(*(make() for _ in range(4)))
    try:
        assert len({sb.image_id for sb in made}) == 1
        assert sum(1 for request in engine_requests if re.fullmatch(r"GET /v[\d.]+/images/\S+/json", request)) == 1
    finally:
        await asyncio.gather(*(sb.close() for sb in made))


async def test_a_tool_call_makes_no_engine_call(sandbox, engine_requests):
    assert sandbox.execd is not None and not sandbox.per_call
    out = await run_bash(sandbox, {"command": "echo hi; ls / | wc -l; sleep 0.2 & echo bg"}, cap=30)
    assert out.startswith("hi\n")
    await sandbox.exec("id -u", user="root", workdir="/")
    await sandbox.exec("sleep 5", timeout=1)
    await sandbox.exec("exit 3")
    await sandbox.diff()
    assert engine_requests == []

    sandbox._drop_server()  # the per-call exec, as images without the server's tools have it
    sandbox.per_call = True
    await run_bash(sandbox, {"command": "echo hi"}, cap=30)
    assert len(engine_requests) >= 3  # exec create, start, inspect: what the server saves


@pytest.mark.parametrize("per_call", [False, True], ids=["server", "per-call"])
async def test_limits_hold_the_same_through_the_server(docker_client, per_call):
    sb = await make(output_limit_bytes=4096)
    root = await make(user="root")
    try:
        for s in (sb, root):
            if per_call:
                s._drop_server()
                s.per_call = True
        who = await sb.exec("id -un; pwd; echo $HOME; cat /proc/self/status | grep -c '^CapEff:.0000000000000000'")
        assert who.output.split() == ["agent", "/tmp", "/home/agent", "1"]
        assert (await sb.exec("pwd", workdir="/usr")).output == "/usr\n"
        assert (await sb.exec("id -u", user="root")).output == "0\n"
        nameless = await sb.exec("id; echo $HOME", user="12345", workdir="/")  # as the verifier's test uid may be
        assert nameless.output == "uid=12345 gid=0(root) groups=0(root)\n/\n"
        assert (await sb.exec("id -un", user="65534")).output == "nobody\n"

        slow = await sb.exec("sleep 300 & (sleep 300 &); setsid sleep 300 & echo started; sleep 300", timeout=2)
        assert slow.timed_out and slow.exit_code is None and "started" in slow.output
        assert (await sb.exec("pgrep -c -u agent sleep || true")).output == "0\n"
        assert (await root.exec("sleep 300 & setsid sleep 300 & echo started")).exit_code == 0
        assert (await root.exec("pgrep -c sleep")).output == "1\n"  # the keepalive alone

        cut = await sb.exec("seq 1 60000; exit 4", timeout=60)
        assert cut.exit_code == 4 and f"[... {cut.truncated_bytes} bytes of output cut ...]" in cut.output
        assert cut.output.startswith("1\n2\n") and cut.output.endswith("59999\n60000\n")
        flood = await sb.exec("yes", timeout=120)
        assert flood.exit_code is None and not flood.timed_out and "killed: more than" in flood.output
        assert (await sb.exec("echo ok")).output == "ok\n"
        assert (sb.execd is None) == per_call  # a flood kills the server; the next command starts one
    finally:
        await asyncio.gather(sb.close(), root.close())


async def test_each_command_runs_in_its_own_work_dir_when_they_alternate(sandbox):
    """The server decodes a work dir only when it differs from the last command's: each command
    still runs where it was asked to, one after another in the same folder or not."""
    await sandbox.exec("mkdir -p '/tmp/a b' /tmp/c")
    for workdir in ["/tmp/a b", "/tmp/a b", "/tmp/c", "/tmp/a b", "/", "/tmp/c", "/tmp/c"]:
        assert (await sandbox.exec("pwd", workdir=workdir)).output == f"{workdir}\n"
    assert (await sandbox.exec("cd /; pwd; cd /tmp/c")).output == "/\n"
    assert (await sandbox.exec("pwd")).output == "/tmp\n"  # the sandbox's own, after all of them


async def test_output_that_imitates_the_framing_cannot_end_a_command_or_change_its_exit_code(sandbox):
    seq = sandbox.execd.seq + 1
    forged = (
        f"printf '#{seq} 0 0\\n#{seq + 1} 0 0\\n!1 0 ready\\n?\\nQUJD\\n'; "  # end lines, hello, base64
        "printf '\\001\\000\\000\\000\\000\\000\\000\\005#1 0 0'; "  # an engine frame header
        "head -c 3000 /dev/urandom; "  # bytes of every kind, no newline
        f"echo '#{seq} 0 0' > /proc/{sandbox.execd.pid}/fd/1; "  # straight into the server's stream
        "sleep 1; echo still-running; exit 7"
    )
    result = await sandbox.exec(forged, timeout=30)
    assert result.exit_code == 7
    assert result.output.startswith(f"#{seq} 0 0\n#{seq + 1} 0 0\n!1 0 ready\n?\nQUJD\n\x01\x00")
    assert "Permission denied" in result.output  # the agent user cannot open the server's stdout
    assert result.output.endswith("still-running\n")
    assert (await sandbox.exec("echo next")).output == "next\n"


async def test_a_stuck_server_is_bounded_by_the_timeout_and_a_grace(docker_client):
    sb = await make(user="root")
    try:
        stuck = await sb.exec(f"kill -STOP {sb.execd.pid}; echo never-read", timeout=2)
        assert stuck.timed_out and stuck.exit_code is None
        assert (await sb.exec("echo again")).output == "again\n"  # a new server
    finally:
        await sb.close()


async def test_a_cancelled_command_leaves_no_output_for_the_next(sandbox):
    running = asyncio.create_task(sandbox.exec("echo early; sleep 30; echo late", timeout=60))
    await asyncio.sleep(1)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert (await sandbox.exec("echo mine")).output == "mine\n"


async def test_a_root_command_that_kills_the_server_is_its_own_failure_and_the_sandbox_lives(docker_client):
    sb = await make(user="root")
    try:
        killed = await sb.exec(f"echo before; kill -9 {sb.execd.pid}; sleep 1", timeout=30)
        assert killed.exit_code is None and "before" in killed.output
        assert "killed the sandbox's command server" in killed.output
        assert (await sb.exec("echo alive")).output == "alive\n"
    finally:
        await sb.close()


@pytest.mark.parametrize("command", ["kill -9 -1; sleep 5", "kill -9 $(cut -d' ' -f2 /run/factory/start); sleep 5"],
                         ids=["everything", "keepalive"])
async def test_a_container_killed_by_the_agents_command_is_the_agents(docker_client, command):
    sb = await make(user="root")
    try:
        with pytest.raises(SandboxCrashed) as crash:
            await sb.exec(command, workdir="/", timeout=30)
            await sb.exec("true", workdir="/")
        assert crash.value.by_agent
    finally:
        await sb.close()


async def test_an_image_without_the_servers_tools_falls_back_to_one_exec_per_command(docker_client):
    sb = await DockerSandbox.create(BASE_IMAGE, SandboxConfig(user="root"), workdir="/tmp", wait=False)
    try:
        await sb._raw("rm /usr/bin/setpriv")
        await sb.prepare(StartState())
        assert sb.per_call and sb.execd is None
        assert (await sb.exec("sleep 60 & echo ok", timeout=10)).output == "ok\n"
        assert (await sb.exec("pgrep -c sleep")).output == "1\n"
    finally:
        await sb.close()


async def test_closing_a_sandbox_ends_a_command_in_flight_at_once(sandbox):
    running = asyncio.create_task(sandbox.exec("sleep 60", timeout=600))
    await asyncio.sleep(1)
    await sandbox.close()
    with pytest.raises(SandboxCrashed):
        await asyncio.wait_for(running, 30)  # not at the command's timeout


async def test_an_upload_through_the_server_makes_no_engine_call_and_lands_as_the_engines_would(sandbox, engine_requests,
                                                                                               docker_client):
    assert sandbox.execd.puts
    await sandbox.exec("ln -s /etc/hostname /tmp/link; mkdir -p /tmp/taken/dir")
    await sandbox.write_files({"/opt/up/deep/root.txt": "root's\n", "/tmp/link": b"\x00\xffbytes"}, owner="root")
    await sandbox.write_files({"/tmp/mine/agent.txt": "agent's\n"})
    assert engine_requests == []
    listed = await sandbox.exec("stat -c '%U %a %s %n' /opt/up /opt/up/deep/root.txt /tmp/link /tmp/mine /tmp/mine/agent.txt",
                                user="root")
    assert listed.output.splitlines() == ["root 755 4096 /opt/up", "root 644 7 /opt/up/deep/root.txt",
                                          "root 644 7 /tmp/link", "agent 755 4096 /tmp/mine", "agent 644 8 /tmp/mine/agent.txt"]
    assert await sandbox.read_file("/tmp/link") == b"\x00\xffbytes"  # the link replaced, not followed
    assert (await sandbox.exec("cat /etc/hostname")).output.strip() == (
        docker_client.api.inspect_container(sandbox.container.id)["Config"]["Hostname"])
    with pytest.raises(SandboxError, match="could not write /tmp/taken: tar: "):  # with what tar said
        await sandbox.write_files({"/tmp/taken": "a file where a directory is"}, owner="root")
    assert (await sandbox.exec("echo in-step")).output == "in-step\n"  # the stream stayed in step


async def test_an_image_without_gnu_head_uploads_through_the_engine(docker_client, engine_requests):
    sb = await DockerSandbox.create(BASE_IMAGE, SandboxConfig(user="root"), workdir="/tmp", wait=False)
    try:
        await sb._raw("mv /usr/bin/head /usr/local/bin/head.moved")
        await sb.prepare(StartState())
        assert sb.execd is not None and not sb.execd.puts
        engine_requests.clear()
        await sb.write_files({"/tmp/up.txt": "up\n"}, owner="root")
        assert [r for r in engine_requests if "/archive" in r]
        assert (await sb.exec("cat /tmp/up.txt")).output == "up\n"
    finally:
        await sb.close()
