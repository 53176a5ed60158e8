"""A sandbox is one Docker container holding a repo at its committed start state.

Isolation by default: no network, every capability dropped but the few that root needs to
set up the repo, no-new-privileges, memory/CPU/pids limits, commands as a non-root user
where the image has one, and an empty environment (nothing of the host passes in).
The container's main process is `sleep <self_destruct>` with auto-remove, so even a
factory killed with -9 leaves nothing behind for longer than that.
"""

from __future__ import annotations

import asyncio
import io
import logging
import shlex
import tarfile
import time
import uuid
from pathlib import PurePosixPath

from docker.errors import APIError, DockerException, ImageNotFound, NotFound
from docker.models.containers import Container

from factory.config import SandboxConfig
from factory.errors import SandboxCrashed, SandboxError, SandboxStartError
from factory.protocols import ExecResult
from factory.records import StartState
from factory.sandbox import engine
from factory.sandbox.output import OutputBuffer

log = logging.getLogger(__name__)

# Root inside the container needs these to prepare the repo and to drop to the agent user;
# the agent user itself gets no capabilities at all.
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETUID", "SETGID"]
GIT = "git -c safe.directory=* -c user.name=factory -c user.email=factory@localhost -c core.hooksPath=/dev/null"
DIFF_LIMIT = 256 * 2**20  # a diff is never cut: past this the attempt's diff is an error
TIMEOUT_EXIT = 124  # coreutils `timeout`
KILLED_EXIT = 137


class DockerSandbox:
    """An async sandbox over one container. Create with `await DockerSandbox.create(...)`."""

    def __init__(self, container: Container, config: SandboxConfig, workdir: str, user: str):
        self.container = container
        self.keepalive_pid = "0"
        self._exec_lock = asyncio.Lock()  # one command at a time: leftovers are killed after each
        self.config = config
        self.workdir = workdir
        self.user = user
        self.closed = False

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def create(
        cls,
        image: str,
        config: SandboxConfig,
        *,
        workdir: str = "/testbed",
        run_id: str = "adhoc",
        attempt_id: str | None = None,
        network: str | None = None,
        memory: str | None = None,
    ) -> DockerSandbox:
        """Start a container; the repo is not touched until `prepare`."""
        attempt_id = attempt_id or uuid.uuid4().hex[:12]
        memory = memory or config.memory
        try:
            container = await engine.call(
                engine.client().containers.run,
                image,
                ["sleep", str(config.self_destruct_seconds)],
                detach=True,
                auto_remove=True,
                labels=engine.labels(run_id, attempt_id),
                network_mode=network or config.network,
                cap_drop=["ALL"],
                cap_add=CAPABILITIES,
                security_opt=["no-new-privileges"],
                mem_limit=memory,
                memswap_limit=memory,
                nano_cpus=int(config.cpus * 1e9),
                pids_limit=config.pids_limit,
                environment={},
                working_dir="/",
                init=True,  # an init that reaps orphans, so killed process trees leave no zombies
            )
        except ImageNotFound as exc:
            raise SandboxStartError(f"image {image} not found; build it (factory images build) or load it") from exc
        except DockerException as exc:
            raise SandboxStartError(f"cannot start a container from {image}: {exc}") from exc
        sandbox = cls(container, config, workdir, "root")
        try:
            # the keepalive sleep is init's only child right after start
            probe = await sandbox._raw(f"cat /proc/1/task/1/children; echo; id -u {shlex.quote(config.user)} || echo none")
        except BaseException:
            await sandbox.close()
            raise
        words = probe.split()
        sandbox.keepalive_pid = words[0] if words else "0"
        sandbox.user = config.user if words[-1:] != ["none"] else "root"
        return sandbox

    async def prepare(self, start: StartState) -> None:
        """Bring the repo to the start state and commit it as the only commit.

        History is dropped (a fresh `git init`), so the agent cannot read the fix out of
        earlier commits; the agent's work is then exactly `git diff` against this commit.
        """
        w = shlex.quote(self.workdir)
        steps = [f"cd {w}"]
        if start.base_commit:
            steps.append(f"{GIT} checkout -q -f {shlex.quote(start.base_commit)}")
        if start.bug_patch:
            await self.write_file("/tmp/factory/start.patch", start.bug_patch, owner="root")
            steps.append(f"{GIT} apply --whitespace=nowarn /tmp/factory/start.patch")
        for path in start.hide_paths:
            steps.append(f"rm -rf -- {shlex.quote(path)}")
        steps += [
            "rm -rf .git /tmp/factory",
            f"{GIT} init -q",
            f"{GIT} add -A",
            f"{GIT} commit -q --allow-empty -m 'start state'",
        ]
        if self.user != "root":
            steps.append(f"chown -R {shlex.quote(self.user)}: {w}")
        result = await self.exec(" && ".join(steps), timeout=600, user="root")
        if result.exit_code != 0:
            raise SandboxError(f"could not reach the start state in {self.workdir}: {result.output[-2000:]}")

    async def close(self) -> None:
        """Remove the container. Safe to call twice and from any path, cancellation included.

        Never raises: an engine that cannot remove a container right now (it happens under
        heavy load) gets a few more tries; after that the container's self-destruct timer
        and `factory clean` take care of it, and the attempt's result stands.
        """
        if self.closed:
            return
        self.closed = True
        for delay in (0.5, 2.0, 5.0, None):
            try:
                await engine.call(self.container.remove, force=True)
                return
            except NotFound:
                return
            except DockerException as exc:
                if delay is None:
                    log.warning("could not remove container %s (%s); `factory clean` removes it",
                                self.container.short_id, exc)
                    return
                await asyncio.sleep(delay)

    async def __aenter__(self) -> DockerSandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ commands

    async def exec(
        self, cmd: str, timeout: float | None = None, *, user: str | None = None, workdir: str | None = None,
        output_limit: int | None = None,
    ) -> ExecResult:
        """Run `cmd` with bash in the workdir; kill it (and its children) at `timeout` seconds.

        Output is kept up to `output_limit` bytes (default: the sandbox config's)."""
        timeout = timeout or 3600
        run_as = user or self.user
        # coreutils timeout kills the command's process group at the deadline; whatever the
        # command left behind (background jobs, a fork bomb) is killed when it returns
        script = f'timeout -k 2 {timeout}s bash -c "$1"; rc=$?; {self._kill_leftovers(run_as)}; exit $rc'
        wrapped = ["sh", "-c", script, "factory-exec", cmd]
        async with self._exec_lock:
            return await self._exec(wrapped, timeout, run_as, workdir or self.workdir, output_limit)

    async def _exec(
        self, wrapped: list[str], timeout: float, user: str, workdir: str, output_limit: int | None = None
    ) -> ExecResult:
        buffer = OutputBuffer(output_limit or self.config.output_limit_bytes)
        started = time.monotonic()
        api = engine.client().api
        try:
            exec_id = await engine.call(
                api.exec_create, self.container.id, wrapped, user=user, workdir=workdir, environment={},
            )
            stream = await engine.call(api.exec_start, exec_id["Id"], stream=True, demux=False)
            flooded = await engine.call(self._drain, stream, buffer, started + timeout + 10)
            info = await engine.call(api.exec_inspect, exec_id["Id"])
        except (APIError, NotFound) as exc:
            raise await self._crashed(exc) from exc
        exit_code = info.get("ExitCode")
        if flooded or info.get("Running"):
            await self._kill_all()
            exit_code = None
            if flooded:
                buffer.note(f"[killed: more than {buffer.limit * 100} bytes of output]")
        elapsed = time.monotonic() - started
        timed_out = not flooded and (exit_code is None or (exit_code in (TIMEOUT_EXIT, KILLED_EXIT) and elapsed >= timeout))
        if not await self._alive():
            raise await self._crashed(None)
        if exit_code == KILLED_EXIT and not timed_out and await self._oom_killed_since_start():
            buffer.note("[killed: out of memory]")
        return ExecResult(
            exit_code=None if timed_out or flooded else exit_code,
            output=buffer.text(),
            timed_out=timed_out,
            truncated_bytes=buffer.cut,
        )

    @staticmethod
    def _drain(stream, buffer: OutputBuffer, deadline: float) -> bool:
        """Read the stream into the buffer; True when output flooded past the hard cap."""
        for chunk in stream:
            buffer.add(chunk)
            if buffer.flooded or time.monotonic() > deadline:
                stream.close()
                return True
        return False

    def _kill_leftovers(self, user: str) -> str:
        """Shell that kills every process but the init, the keepalive sleep and itself."""
        if user != "root":
            return "kill -9 -1 2>/dev/null"  # all of this user's processes, atomically
        one_round = (
            'for d in /proc/[0-9]*; do p=${d#/proc/}; '
            f'[ "$p" -gt 1 ] && [ "$p" != {self.keepalive_pid} ] && [ "$p" != $$ ] && kill -9 "$p" 2>/dev/null; done'
        )
        return f"{one_round}; {one_round}; true"

    async def _raw(self, script: str) -> str:
        """Run a short trusted script as root: no timeout wrapper, no cleanup of leftovers."""
        api = engine.client().api
        exec_id = await engine.call(api.exec_create, self.container.id, ["sh", "-c", script], user="root")
        return (await engine.call(api.exec_start, exec_id["Id"])).decode(errors="replace")

    async def _kill_all(self) -> None:
        await self._raw(self._kill_leftovers("root"))

    async def _alive(self) -> bool:
        try:
            await engine.call(self.container.reload)
        except NotFound:
            return False
        return self.container.status == "running"

    async def _oom_killed_since_start(self) -> bool:
        out = await self._raw("cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null")
        return any(line.split()[:1] == ["oom_kill"] and line.split()[1] != "0" for line in out.splitlines())

    async def _crashed(self, exc: Exception | None) -> SandboxCrashed:
        try:
            state = (await engine.call(engine.client().api.inspect_container, self.container.id))["State"]
            oom, code = bool(state.get("OOMKilled")), state.get("ExitCode")
        except NotFound:
            oom, code = False, None
        self.closed = True
        why = "out of memory" if oom else "killed or removed"
        return SandboxCrashed(f"container {self.container.short_id} died mid-attempt ({why})", oom=oom, exit_code=code)

    # ------------------------------------------------------------------ files

    def _abs(self, path: str) -> PurePosixPath:
        p = PurePosixPath(path)
        return p if p.is_absolute() else PurePosixPath(self.workdir) / p

    async def read_file(self, path: str) -> bytes:
        target = self._abs(path)
        try:
            chunks, _ = await engine.call(self.container.get_archive, str(target))
            data = b"".join(chunks)
        except NotFound as exc:
            raise FileNotFoundError(str(target)) from exc
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            member = tar.next()
            if member is None or not member.isfile():
                raise IsADirectoryError(str(target))
            extracted = tar.extractfile(member)
            assert extracted is not None
            return extracted.read()

    async def write_file(self, path: str, data: bytes | str, *, owner: str | None = None) -> None:
        """Write a file (parents created), owned by the sandbox user unless `owner` says otherwise."""
        target = self._abs(path)
        raw = data.encode() if isinstance(data, str) else data
        owner = owner or self.user
        ids = "0 0" if owner == "root" else f"$(id -u {shlex.quote(owner)}) $(id -g {shlex.quote(owner)})"
        probe = await self.exec(
            f"mkdir -p {shlex.quote(str(target.parent))} && echo {ids}", timeout=30, user="root", workdir="/"
        )
        uid, gid = (int(x) for x in probe.output.split()[-2:])
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo(target.name)
            info.size, info.mode, info.uid, info.gid, info.mtime = len(raw), 0o644, uid, gid, int(time.time())
            tar.addfile(info, io.BytesIO(raw))
        if not await engine.call(self.container.put_archive, str(target.parent), buf.getvalue()):
            raise SandboxError(f"could not write {target}")
        if owner != "root":
            await self.exec(f"chown {uid}:{gid} {shlex.quote(str(target.parent))}", timeout=30, user="root", workdir="/")

    async def list_files(self, path: str = ".") -> list[str]:
        result = await self.exec(f"ls -1Ap -- {shlex.quote(str(self._abs(path)))}", timeout=30)
        if result.exit_code != 0:
            raise FileNotFoundError(result.output.strip())
        return [line for line in result.output.splitlines() if line]

    async def diff(self) -> str:
        """The agent's changes against the start commit: untracked files included, binary as git binary patches.

        One exec: a throwaway index keeps the agent's own index (and `git status`) untouched, and
        git's stderr goes to a file read only on failure, so the output is the diff alone.
        """
        index, err = "/tmp/.factory-diff-index", "/tmp/.factory-diff-err"
        cmd = (
            f"export GIT_INDEX_FILE={index}; {{ {GIT} read-tree HEAD && {GIT} add -A && "
            f"{GIT} diff --cached --binary --no-color --no-ext-diff --no-renames HEAD; }} 2>{err}; "
            f"status=$?; rm -f {index}; [ $status = 0 ] && rm -f {err}; exit $status"
        )
        result = await self.exec(cmd, timeout=300, user="root", output_limit=DIFF_LIMIT)
        if result.exit_code != 0 or result.truncated_bytes:
            why = (await self._raw(f"cat {err}; rm -f {err}"))[-1000:]
            raise SandboxError(f"git diff failed in {self.workdir}: {why or result.output[-1000:]}")
        return result.output
