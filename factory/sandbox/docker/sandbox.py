"""A sandbox is one Docker container holding a repo at its committed start state.

Isolation by default: no network, every capability dropped but the few that root needs to
set up the repo, no-new-privileges, memory/CPU/pids limits, commands as a non-root user
(created at start on images that have only root, as SWE-bench and SWE-smith images do), and
an environment with nothing of the host in it.

The container's own command is the factory's start script (`START`): it makes sure the
user exists, writes one line that says who the user is and which pid keeps the container
alive, and then becomes that keepalive (`exec sleep <self_destruct>`, auto-removed), so a
factory killed with -9 leaves nothing behind for longer than that. `create` waits for that
line, so nothing about the container is guessed from a probe that might answer too early.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import shlex
import tarfile
import time
import uuid
from collections.abc import Generator, Mapping
from pathlib import PurePosixPath

from docker.models.containers import Container

from factory.errors import EngineError, EngineGone, SandboxCrashed, SandboxError, SandboxStartError
from factory.protocols import ExecResult
from factory.records import StartState
from factory.sandbox.backend import DIFF_LIMIT, Rewrite
from factory.sandbox.config import SandboxConfig
from factory.sandbox.docker import engine
from factory.sandbox.docker.execd import ATTACHED, READY, RUNTIME, Closed, Execd, Garbled
from factory.sandbox.docker.start_image import (
    ENSURE_USER,
    IMAGE_GIT,
    PREFIX,
    REPO_GIT,
    STALE_ARTIFACTS,
    TASK_PREFIX,
    owned_by,
    start_image,
)
from factory.sandbox.git import (
    COMMIT,
    FACTORY_DIR,
    GIT,
    GIT_DIR,
    borrow,
    commit_start_state,
    diff_script,
    git,
    init_git_dir,
    stage,
)
from factory.sandbox.output import OutputBuffer

log = logging.getLogger(__name__)

# Root inside the container needs these to prepare the repo, create the agent user and drop
# to it, and to leave the modes a terminal task asks for (FSETID: without it the kernel clears the
# setgid bit root's `chmod 2775` sets on a folder of a group root is not in); the agent user itself
# gets no capabilities at all.
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETUID", "SETGID"]
ENVIRONMENT = {"PYTHONDONTWRITEBYTECODE": "1"}
START_PATCH = "/tmp/factory-start.patch"
THEN = "factory-start-state-reached"
TIMEOUT_EXIT = 124  # coreutils `timeout`
PUT_SECONDS = 600  # an upload through the command server: a stuck one is dropped for the engine's
KILLED_EXIT = 137
SIGNALLED = 128  # shells exit 128 + n for a command that signal n ended
# $1: the user commands run as (created when the image lacks it), $2: seconds to live.
START = "user=$1" + ENSURE_USER + r"""
# root is 0:0 in every image: its two `id` processes are spared (every verification container's)
if { [ "$user" = root ] && uid=0 && gid=0; } || { uid=$(id -u "$user" 2>/dev/null) && gid=$(id -g "$user" 2>/dev/null); }; then
  line="ready $$ $user $uid $gid"
else
  line="error cannot create the user $user in this image (no useradd, read-only /etc/passwd?)"
fi
mkdir -p $RUNTIME && echo "$line" > "$READY.tmp" && mv "$READY.tmp" "$READY"
exec sleep "$2"
""".replace("$READY", READY).replace("$RUNTIME", RUNTIME)
WAIT = f"i=0; while [ ! -s {READY} ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i + 1)); done"
WAIT_READY = f"{WAIT}; cat {READY}"
IS_READY = f'{WAIT}; read -r line < {READY}; case "$line" in "ready "*) true;; *) false;; esac'
"""`WAIT_READY` for a script that only goes on once the start script said ready: with shell
builtins alone (no `cat` and `grep` in every start state)."""


class DockerSandbox:
    """An async sandbox over one container (`factory.protocols.Sandbox`). Create with
    `await DockerSandbox.create(...)`."""

    def __init__(self, container: Container, config: SandboxConfig, workdir: str):
        self.container = container
        self.config = config
        self.workdir = workdir
        # known from the start script's ready line (see `create`)
        self.user, self.uid, self.gid, self.keepalive_pid = "root", 0, 0, "0"
        self.waiting = False  # the start script may still be running: `prepare` waits for it first
        self._exec_lock = asyncio.Lock()  # one command at a time: leftovers are killed after each
        self.execd: Execd | None = None  # the command server (`factory.sandbox.docker.execd`), once started
        self.per_call = False  # no server on this image or transport: one exec per command
        self.started_at = time.time()
        self.closed = False
        self.start_commit: str | None = None  # set by `prepare`
        self.on_start_image = False  # started from a start image (`factory.sandbox.docker.start_image`)
        self.made_of: str | None = None  # started from a task image made of this image (`task_image`)

    @property
    def image_id(self) -> str:
        """The image its start state was reached from: its container's, or for a sandbox of a task
        image, the image that task image was made of (what a verifier learns of an image holds for both)."""
        return self.made_of or str(self.container.attrs.get("Image") or "")

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
        wait: bool = True,
    ) -> DockerSandbox:
        """Start a container and wait for its start script; the repo is not touched until `prepare`.

        A root sandbox (`config.user` root) needs nothing from the start script but that it ran:
        with `wait=False` the wait is the first step of `prepare`'s exec, one round trip fewer."""
        if not wait and config.user != "root":
            raise ValueError("only a root sandbox can leave the wait for its start script to prepare")
        attempt_id = attempt_id or uuid.uuid4().hex[:12]
        memory = memory or config.memory
        started_at = time.time()
        source = image
        for again in (False, True):
            try:
                # a start image drops the work dir's history (a terminal task's is part of its state); a task image is one
                done = config.as_built or source.startswith(TASK_PREFIX)
                image = source if done else await start_image(source, workdir, config.user, again=again)
            except SandboxError as exc:
                raise SandboxStartError(f"{exc}") from exc
            try:
                container = await cls._container(image, config, run_id, attempt_id, network, memory)
                break
            except EngineGone as exc:
                if image != source and not again:
                    continue  # its start image was removed since it was made (image_cache_gb, a user)
                raise SandboxStartError(f"image {image} is not on this engine; build it (factory images build), "
                                        f"pull it or load it") from exc
            except EngineError as exc:
                raise SandboxStartError(f"cannot start a container from {image}: {exc}") from exc
        try:
            await engine.made(container.start, undo=lambda _: engine.discard(container))
        except EngineError as exc:
            with contextlib.suppress(EngineError):
                await engine.call(container.remove, force=True, v=True)
            raise SandboxStartError(f"cannot start a container from {image}: {exc}") from exc
        sandbox = cls(container, config, workdir)
        sandbox.started_at = started_at
        sandbox.on_start_image = image.startswith(PREFIX)
        if not wait:
            sandbox.waiting = True
            return sandbox
        try:
            ready = (await sandbox._start_server() or await sandbox._raw(WAIT_READY)).split()
            if ready[:1] != ["ready"] or len(ready) != 5:
                raise SandboxStartError(f"{image}: the sandbox did not start: {' '.join(ready)[:300] or 'no answer'}")
        except (EngineError, Closed, TimeoutError) as exc:
            await sandbox.close()
            raise SandboxStartError(f"{image}: the sandbox did not start: {exc}") from exc
        except BaseException:
            await sandbox.close()
            raise
        sandbox.keepalive_pid, sandbox.user = ready[1], ready[2]
        sandbox.uid, sandbox.gid = int(ready[3]), int(ready[4])
        return sandbox

    @staticmethod
    async def _container(image: str, config: SandboxConfig, run_id: str, attempt_id: str, network: str | None,
                         memory: str) -> Container:
        """A container of `image`, created, not started. Never docker-py's `run`: it pulls a
        missing image by itself, unbounded and unretried; pulls are `factory.sandbox.pull`'s."""
        return await engine.made(
            engine.created,
            image,
            ["sh", "-c", START, "factory-start", config.user, str(config.self_destruct_seconds)],
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
            environment=ENVIRONMENT,
            user="root",
            working_dir="/",
            init=True,  # an init that reaps orphans, so killed process trees leave no zombies
            tmpfs={RUNTIME: "rw,nosuid,nodev,noexec,size=1m,mode=755"},
            undo=engine.discard,
        )

    async def prepare(self, start: StartState, *, files: Mapping[str, str] | None = None, then: str = "",
                      rewrite: Rewrite | None = None) -> str:
        """Bring the repo to the start state and commit it as the only commit.

        History is dropped, so the agent cannot read the fix out of earlier commits. The commit
        lives in the factory's own git dir, out of the agent's reach (`factory.sandbox.git`); the
        agent's `.git` is a copy of it, and its work is exactly the diff against this commit.

        A caller with work to do at the start state saves round trips to the engine: `files`
        (root's) go up with the start patch, and `then` (root shell, in the work tree) runs right
        after the commit in the same exec. Returns what `then` printed. A `rewrite` (the agent's
        view with its hidden tests taken out) costs one more exec: what it reads is printed with the
        start patch applied, and the files it makes of that go in before the commit.
        """
        w = shlex.quote(self.workdir)
        steps = [IS_READY] if self.waiting else []
        steps.append(f"cd {w}")
        if self.config.as_built:
            return await self._record_as_built(steps)
        history = REPO_GIT if self.on_start_image else ".git"
        if start.base_commit:  # the image's own history, before the agent has run anything
            steps.append(f"{git(history, '.')} checkout -q -f {shlex.quote(start.base_commit)}")
        steps += init_git_dir()
        if self.on_start_image:
            steps += borrow(IMAGE_GIT)
        uploads = dict(files or {})
        if start.bug_patch:
            uploads[START_PATCH] = start.bug_patch
            steps.append(f"{GIT} apply --whitespace=nowarn {START_PATCH}")
        if uploads:
            await self.write_files(uploads, owner="root")
        if rewrite is not None:  # read at the start state, rewritten on the host, put back before the commit
            reached = await self.exec(" && ".join(steps) + f" && {{ {rewrite.readback}\n}}", timeout=600, user="root",
                                      output_limit=DIFF_LIMIT)
            if reached.exit_code != 0:
                raise SandboxError(f"could not reach the start state in {self.workdir}: {reached.output[-2000:]}")
            steps = [f"cd {w}"]
            rewritten = rewrite.files(reached.output)
            if rewritten:
                await self.write_files({path: text.encode() for path, text in rewritten.items()}, owner="root")
        hidden = " ".join(shlex.quote(path) for path in start.hide_paths)
        steps.append(f"rm -rf -- .git {history} {START_PATCH} {hidden}")
        steps += STALE_ARTIFACTS
        owner = None if self.user == "root" else f"{self.uid}:{self.gid}"
        if owner:  # before the commit: the index's stat cache then holds for the agent's files
            steps.append(owned_by(owner, self.workdir))
        steps += commit_start_state(self.workdir, owner, IMAGE_GIT if self.on_start_image else None)
        script = " && ".join(steps) + (f" && echo {THEN} && {{ {then}\n}}" if then else "")
        result = await self.exec(script, timeout=600, user="root", output_limit=DIFF_LIMIT)
        before, _, after = result.output.partition(f"\n{THEN}\n")
        commit = before.split()[-1:]
        if result.exit_code != 0 or not commit or not COMMIT.fullmatch(commit[0]):
            raise SandboxError(f"could not reach the start state in {self.workdir} (or run what follows it): "
                               f"{result.output[-2000:]}")
        self.start_commit = commit[0]
        self.waiting = False
        return after

    async def _record_as_built(self, steps: list[str]) -> str:
        """The work dir's start state committed in the factory's git dir, the work dir untouched
        (`SandboxConfig.as_built`) but for its owner when the agent is not root."""
        g = git(GIT_DIR, self.workdir)
        owner = None if self.user == "root" else f"{self.uid}:{self.gid}"
        steps += [*init_git_dir(), *([owned_by(owner, self.workdir)] if owner else []), stage(g, f"{FACTORY_DIR}/nested"),
                  f"{g} commit -q --no-verify --allow-empty -m 'start state'", f"{g} rev-parse --verify HEAD"]
        result = await self.exec(" && ".join(steps), timeout=600, user="root", output_limit=DIFF_LIMIT)
        commit = result.output.split()[-1:]
        if result.exit_code != 0 or not commit or not COMMIT.fullmatch(commit[0]):
            raise SandboxError(f"could not record the start state of {self.workdir}: {result.output[-2000:]}")
        self.start_commit = commit[0]
        self.waiting = False
        return ""

    async def close(self) -> None:
        """Remove the container. Safe to call twice and from any path, cancellation included.

        Never raises: an engine that cannot remove a container right now (it happens under
        heavy load) gets a few more tries; after that the container's self-destruct timer
        and `factory clean` take care of it, and the attempt's result stands.
        """
        if self.closed:
            return
        self.closed = True
        self._drop_server()
        # a caller cancelled while it waits does not stop the removal halfway (between tries)
        await asyncio.shield(self._remove())

    async def _remove(self) -> None:
        for delay in (0.5, 2.0, 5.0, None):
            try:
                await engine.call(self.container.remove, force=True, v=True)  # v: an image's VOLUMEs leave none
                return
            except EngineGone:
                return
            except EngineError as exc:
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
        left = ATTACHED if self.config.keep_detached else self._kill_leftovers(run_as)
        script = f'timeout -k 2 {timeout}s bash -c "$1"; rc=$?; {left}; exit $rc'
        wrapped = ["sh", "-c", script, "factory-exec", cmd]
        async with self._exec_lock:
            try:
                if not self.per_call:
                    served = await self._serve(cmd, timeout, run_as, workdir or self.workdir, output_limit)
                    if served is not None:
                        return served
                return await self._exec(wrapped, timeout, run_as, workdir or self.workdir, output_limit)
            except EngineError as exc:
                if await self._alive():
                    raise  # the engine stumbled on a live container: infrastructure
                raise await self._crashed() from exc

    async def _start_server(self) -> str | None:
        """Start the command server; the start script's ready line it read (None: read none)."""
        self.execd, ready = await Execd.start(self.container.id, keep_detached=self.config.keep_detached)
        self.per_call = self.execd is None
        return ready

    def _drop_server(self) -> None:
        if self.execd is not None:
            self.execd.close()
            self.execd = None

    async def _serve(self, cmd: str, timeout: float, user: str, workdir: str, output_limit: int | None) -> ExecResult | None:
        """Run `cmd` through the command server: no engine call unless something went wrong.
        None when this sandbox has no server (the caller makes the per-call exec)."""
        buffer = OutputBuffer(output_limit or self.config.output_limit_bytes)
        started = time.monotonic()
        exit_code = stuck = None
        server: Execd | None = None
        try:
            if self.execd is None:
                await self._start_server()
            server = self.execd
            if server is None:
                return None
            try:
                exit_code = await server.run(cmd, timeout, user, workdir, buffer)
            finally:
                if server.busy:  # cancelled or failed mid-command: the stream is out of step
                    self._drop_server()
        except TimeoutError:
            stuck = True
        except Garbled:
            buffer.note("[killed: something in the sandbox wrote into its command server's stream]")
        except Closed:
            self._drop_server()
            if await self._stopped():
                raise await self._crashed() from None
            # the container lives and its server does not: killed by the command (only root can),
            # or still there when the engine dropped the stream (infrastructure)
            alive = f"kill -9 {server.pid} 2>/dev/null && echo alive; " if server and server.pid.isdigit() else ""
            if "alive" in await self._raw(alive + self._kill_leftovers("root")):
                raise EngineError(f"the engine dropped the stream of container {self.container.short_id}") from None
            buffer.note("[killed: the command killed the sandbox's command server]")
            return ExecResult(exit_code=None, output=buffer.text(), timed_out=False, truncated_bytes=buffer.cut)
        flooded = exit_code is None and not stuck
        if exit_code is None:
            self._drop_server()
            await self._kill_all()
            if buffer.flooded:
                buffer.note(f"[killed: more than {buffer.limit * 100} bytes of output]")
            if not await self._alive():
                raise EngineGone(f"container {self.container.short_id} is gone")
        elapsed = time.monotonic() - started
        timed_out = bool(stuck) or (exit_code in (TIMEOUT_EXIT, KILLED_EXIT) and elapsed >= timeout)
        return ExecResult(
            exit_code=None if timed_out or flooded else exit_code,
            output=buffer.text(),
            timed_out=timed_out,
            truncated_bytes=buffer.cut,
        )

    async def _stopped(self, seconds: float = 5) -> bool:
        """Whether the container has stopped, or does within `seconds` (its stream ending comes first)."""
        try:
            await engine.call(engine.client().api.wait, self.container.id, timeout=seconds)
        except EngineGone:
            return True
        except EngineError:
            return not await self._alive()
        return True

    async def _exec(
        self, wrapped: list[str], timeout: float, user: str, workdir: str, output_limit: int | None = None
    ) -> ExecResult:
        buffer = OutputBuffer(output_limit or self.config.output_limit_bytes)
        started = time.monotonic()
        api = engine.client().api
        exec_id = await engine.call(api.exec_create, self.container.id, wrapped, user=user, workdir=workdir)
        output = engine.exec_output(api, exec_id["Id"], timeout + 10)
        flooded = await engine.call(self._drain, output, buffer, started + timeout + 10)
        info = await engine.call(api.exec_inspect, exec_id["Id"])
        exit_code = info.get("ExitCode")
        if flooded or info.get("Running"):
            await self._kill_all()
            exit_code = None
            if flooded:
                buffer.note(f"[killed: more than {buffer.limit * 100} bytes of output]")
        elapsed = time.monotonic() - started
        timed_out = not flooded and (exit_code is None or (exit_code in (TIMEOUT_EXIT, KILLED_EXIT) and elapsed >= timeout))
        # a command killed by a signal may be the first sign of the container being removed;
        # the engine can still call it running for a moment, so ask its events as well
        killed = exit_code == KILLED_EXIT and not timed_out
        # a command that exited by itself ran in a live container: only a death by signal, a
        # timeout or a lost exit code may mean the container went, so only they cost the engine
        # a look (a container gone before the next call fails that call, and `exec` says why)
        ambiguous = exit_code is None or exit_code >= SIGNALLED or timed_out or flooded
        if ambiguous and (not await self._alive() or (killed and "kill" in await engine.call(self._events))):
            raise EngineGone(f"container {self.container.short_id} is gone")
        if killed and await self._oom_killed_since_start():
            buffer.note("[killed: out of memory]")
        return ExecResult(
            exit_code=None if timed_out or flooded else exit_code,
            output=buffer.text(),
            timed_out=timed_out,
            truncated_bytes=buffer.cut,
        )

    @staticmethod
    def _drain(output: Generator[bytes, None, None], buffer: OutputBuffer, deadline: float) -> bool:
        """Read the output into the buffer; True when it flooded past the hard cap."""
        for chunk in output:
            buffer.add(chunk)
            if buffer.flooded or time.monotonic() > deadline:
                output.close()
                return True
        return False

    def _kill_leftovers(self, user: str) -> str:
        """Shell that kills every process but the init, the keepalive sleep and itself."""
        if user != "root":
            return "kill -9 -1 2>/dev/null"  # all of this user's processes, atomically
        one_round = (
            'for d in /proc/[0-9]*; do p=${d#/proc/}; '
            '[ "$p" -gt 1 ] && [ "$p" != "$k" ] && [ "$p" != $$ ] && kill -9 "$p" 2>/dev/null; done'
        )
        # the keepalive's pid is on its ready line; with no ready line yet, nothing is killed
        return f'k=$(cut -d" " -f2 {READY} 2>/dev/null) && [ -n "$k" ] && {{ {one_round}; {one_round}; }}; true'

    async def _raw(self, script: str) -> str:
        """Run a short trusted script as root: no timeout wrapper, no cleanup of leftovers."""
        api = engine.client().api
        exec_id = await engine.call(api.exec_create, self.container.id, ["sh", "-c", script], user="root")
        return b"".join(await engine.call(list, engine.exec_output(api, exec_id["Id"], 600))).decode(errors="replace")

    async def _kill_all(self) -> None:
        await self._raw(self._kill_leftovers("root"))

    async def _alive(self) -> bool:
        try:
            await engine.call(self.container.reload)
        except EngineGone:
            return False
        return self.container.status == "running"

    async def _oom_killed_since_start(self) -> bool:
        out = await self._raw("cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null")
        return any(line.split()[:1] == ["oom_kill"] and line.split()[1] != "0" for line in out.splitlines())

    async def _crashed(self) -> SandboxCrashed:
        """Why the container is gone, from the engine's events: a `kill` came from outside
        (someone removed or stopped it: infrastructure); a death without one came from a
        process inside, and every process in a sandbox runs for the agent (its commands, the
        code it wrote), so that crash is the agent's."""
        self.closed = True
        try:
            actions = await engine.call(self._events)
        except EngineError:
            actions = []
        oom = "oom" in actions
        from_inside = "die" in actions and "kill" not in actions
        by_agent = oom or from_inside
        why = "out of memory" if oom else ("its keepalive ended" if from_inside else "killed or removed from outside")
        who = "by the agent's own command" if by_agent else "infrastructure"
        return SandboxCrashed(f"container {self.container.short_id} died mid-attempt ({why}; {who})",
                              oom=oom, by_agent=by_agent)

    def _events(self) -> list[str]:
        api = engine.client().api
        events = api.events(since=int(self.started_at) - 1, until=int(time.time()) + 1,
                            filters={"container": self.container.id}, decode=True)
        return [e.get("Action", e.get("status", "")).split(":")[0] for e in events]

    # ------------------------------------------------------------------ files

    def _abs(self, path: str) -> PurePosixPath:
        p = PurePosixPath(path)
        return p if p.is_absolute() else PurePosixPath(self.workdir) / p

    async def read_file(self, path: str) -> bytes:
        target = self._abs(path)
        try:
            data = await engine.call(self._archive_bytes, str(target))
        except EngineGone as exc:
            if await self._alive():
                raise FileNotFoundError(str(target)) from exc
            raise await self._crashed() from exc
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            member = tar.next()
            if member is None or not member.isfile():
                raise IsADirectoryError(str(target))
            extracted = tar.extractfile(member)
            assert extracted is not None
            return extracted.read()

    def _archive_bytes(self, path: str) -> bytes:
        chunks, _ = self.container.get_archive(path)
        return b"".join(chunks)  # read here, in the engine's thread: the stream is lazy

    async def write_file(self, path: str, data: bytes | str, *, owner: str | None = None) -> None:
        """Write a file (parents created), owned by the sandbox user unless `owner` is root."""
        await self.write_files({path: data}, owner=owner)

    async def write_files(self, files: Mapping[str, bytes | str], *, owner: str | None = None) -> None:
        """Write files (parents created) in one upload, owned by the sandbox user unless `owner` is root.

        Root's files take one round trip: the engine makes missing parents itself (root's, 0755).
        The user's take one more, an exec that makes their parents the user's first."""
        targets = {self._abs(path): data.encode() if isinstance(data, str) else data for path, data in files.items()}
        uid, gid = (0, 0) if (owner or self.user) == "root" else (self.uid, self.gid)
        if uid:
            parents = " ".join(sorted({shlex.quote(str(t.parent)) for t in targets}))
            made = await self.exec(f"mkdir -p {parents} && chown {uid}:{gid} {parents}", timeout=30, user="root", workdir="/")
            if made.exit_code != 0:
                raise SandboxError(f"could not create {parents}: {made.output[-300:]}")
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for target, raw in targets.items():
                info = tarfile.TarInfo(str(target.relative_to("/")))
                info.size, info.mode, info.uid, info.gid, info.mtime = len(raw), 0o644, uid, gid, int(time.time())
                tar.addfile(info, io.BytesIO(raw))
        if await self._put(buf.getvalue(), targets):
            return
        try:
            written = await engine.call(self.container.put_archive, "/", buf.getvalue())
        except EngineError as exc:
            if await self._alive():
                raise
            raise await self._crashed() from exc
        if not written:
            raise SandboxError(f"could not write {', '.join(map(str, targets))}")

    async def _put(self, archive: bytes, targets: Mapping[PurePosixPath, bytes]) -> bool:
        """Unpack `archive` at / through the command server (`Execd.put`): no engine call. False
        when this sandbox's server cannot (the caller uploads through the engine)."""
        buffer = OutputBuffer(self.config.output_limit_bytes)
        async with self._exec_lock:
            if self.per_call:
                return False
            try:
                if self.execd is None:
                    await self._start_server()
                server = self.execd
                if server is None or not server.puts:
                    return False
                try:
                    code = await server.put(archive, PUT_SECONDS, buffer)
                finally:
                    if server.busy:  # cancelled or failed mid-upload: the stream is out of step
                        self._drop_server()
            except (Closed, TimeoutError, EngineError):
                self._drop_server()
                return False  # the engine's upload says what is wrong, or does it
        if code != 0:
            raise SandboxError(f"could not write {', '.join(map(str, targets))}: {buffer.text()[-500:]}")
        return True

    async def list_files(self, path: str = ".") -> list[str]:
        result = await self.exec(f"ls -1Ap -- {shlex.quote(str(self._abs(path)))}", timeout=30)
        if result.exit_code != 0:
            raise FileNotFoundError(result.output.strip())
        return [line for line in result.output.splitlines() if line]

    async def diff(self) -> str:
        """The agent's changes against the start commit: untracked files included, binary as git binary patches.

        One exec, as root, with the factory's own git (`factory.sandbox.git.diff_script`): nothing
        of the agent's `.git` is read and nothing it configured runs; git's stderr goes to a file
        read only on failure, so the output is the diff alone.
        """
        err = f"{FACTORY_DIR}/diff.err"
        result = await self.exec(diff_script(self.workdir, self.start_commit, err), timeout=300, user="root",
                                 output_limit=DIFF_LIMIT)
        if result.exit_code != 0 or result.truncated_bytes:
            why = (await self._raw(f"cat {err}; rm -f {err}"))[-1000:]
            raise SandboxError(f"git diff failed in {self.workdir}: {why or result.output[-1000:]}")
        return result.output
