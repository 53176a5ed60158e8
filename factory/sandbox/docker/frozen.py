"""A sandbox's final state frozen into an image, and containers of that image run without
trusting anything in it (final-state verification, `factory.verify.final_state`).

    freeze(sandbox) ─► the services the agent left running (`factory.sandbox.services`, read by a
                       root shell in it) and the engine's list of what the container changed (docker
                       diff), kept as labels ─► committed to an image (labelled the factory's) ─►
                       removed when verified
    ServicesRun(image) ─► the services started again, each an exec of its own argv, user, work dir and
                       environment ─► their ports awaited
    StateRun(image) ─► created, not started (in a ServicesRun's network alone, when there is one) ─►
                       started only after the verifier read the changes ─► argv execs (no shell of the
                       image's in between) ─► killed ─► files read by the engine

Everything here that reads the state reads it through the engine (`diff`, `get_archive`), so no
program the agent left behind runs to answer: a container is killed before its reward is read. The
services list alone is read by a shell of the state's, before the commit: what it says only decides
what runs in the services' container, which reaches nothing of the tests' but their network.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import tarfile

from factory.errors import EngineError, SandboxError
from factory.protocols import Ran
from factory.sandbox.docker import engine
from factory.sandbox.docker.execd import PIDFILE, READY
from factory.sandbox.docker.sandbox import CAPABILITIES, DockerSandbox
from factory.sandbox.services import NET_TABLES, Service, listening, read_snapshot, snapshot

STATE_REPOSITORY = "factory-state"
LABEL_CHANGES = "factory.state.changes"
"""The frozen image's label: JSON [[kind, path], ...] of what the agent changed outside its work dir."""
LABEL_SERVICES = "factory.state.services"
"""The frozen image's label: base64 of JSON [Service, ...], what the agent left running (base64: a
commit's LABEL change would expand the `$` of an environment value)."""
PORT_POLL_SECONDS = 0.3
MAX_CHANGES = 20000
"""Paths kept in the label; past it the list ends with `["…", "truncated"]` and the verifier says so."""
KINDS = {0: "changed", 1: "added", 2: "deleted"}
"""docker diff's kinds."""


async def freeze(sandbox: DockerSandbox, run_id: str, attempt_id: str) -> str:
    """Commit the sandbox's container as it is now; the new image's id. The services the agent left
    running are read first (`factory.sandbox.services`). The container is paused while it is
    committed (the engine's default), so no process of the agent's writes half a file into it."""
    container = sandbox.container
    try:
        running = await sandbox._raw(snapshot(f"$(cut -d' ' -f2 {READY}) $(cat {PIDFILE})"))
        diff = await engine.call(container.diff) or []
        changes = [[KINDS.get(c["Kind"], "changed"), c["Path"]] for c in diff
                   if not _under(c["Path"], sandbox.workdir)]
        if len(changes) > MAX_CHANGES:
            changes = [*changes[:MAX_CHANGES], ["…", "truncated"]]
        services = [s.model_dump() for s in read_snapshot(running)]
        labels = {**engine.labels(run_id, attempt_id), LABEL_CHANGES: json.dumps(changes),
                  LABEL_SERVICES: base64.b64encode(json.dumps(services).encode()).decode()}
        image = await engine.made(container.commit, repository=STATE_REPOSITORY, tag=engine.image_tag(attempt_id),
                                  changes=[f"LABEL {k}={json.dumps(v)}" for k, v in labels.items()],
                                  undo=engine.discard_image)
    except EngineError as exc:
        raise SandboxError(f"could not freeze the final state of {attempt_id}: {exc}") from exc
    return image.id


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


async def changes_of(image: str) -> list[tuple[str, str]]:
    """What the agent changed outside its work dir, as `freeze` recorded it."""
    try:
        found = await engine.call(engine.client().images.get, image)
    except EngineError as exc:
        raise SandboxError(f"the frozen final state {image} is not on this engine: {exc}") from exc
    return [tuple(c) for c in json.loads((found.labels or {}).get(LABEL_CHANGES, "[]"))]


async def services_of(image: str) -> list[Service]:
    """The services the agent left running, as `freeze` recorded them."""
    try:
        found = await engine.call(engine.client().images.get, image)
        recorded = json.loads(base64.b64decode((found.labels or {}).get(LABEL_SERVICES, "") or b"W10="))
    except EngineError as exc:
        raise SandboxError(f"the frozen final state {image} is not on this engine: {exc}") from exc
    return [Service.model_validate(s) for s in recorded]


async def remove_state(image: str) -> None:
    """The frozen state is done with (verified): it goes."""
    with contextlib.suppress(EngineError):  # already gone is fine
        await engine.call(engine.client().api.remove_image, image, force=True)


class StateRun:
    """A container of a frozen state, for the verifier: root, offline (or in the network of the
    state's services, `beside`), its own limits."""

    def __init__(self, container, run_id: str):
        self.container, self.run_id = container, run_id

    @classmethod
    async def create(cls, image: str, *, run_id: str, attempt_id: str, memory: str, cpus: float, pids: int = 1024,
                     beside: StateRun | None = None) -> StateRun:
        # the keepalive is the image's own `sleep`, started only once the verifier has read the changes
        network = f"container:{beside.container.id}" if beside is not None else "none"
        container = await engine.made(
            engine.client().containers.create, image, ["sleep", "7200"], entrypoint=[], labels=engine.labels(run_id, attempt_id),
            network_mode=network, cap_drop=["ALL"], cap_add=CAPABILITIES, security_opt=["no-new-privileges"],
            mem_limit=memory, memswap_limit=memory, nano_cpus=int(cpus * 1e9), pids_limit=pids,
            environment={}, user="root", working_dir="/", init=True, undo=engine.discard)
        return cls(container, run_id)

    async def start(self) -> None:
        await engine.call(self.container.start)

    async def run(self, argv: list[str], seconds: float, workdir: str = "/") -> Ran:
        """`argv` as root, no shell around it; None as the exit code when it outlived `seconds`."""
        api = engine.client().api
        made = await engine.call(api.exec_create, self.container.id, argv, user="root", workdir=workdir, environment={})
        try:
            output = b"".join(await asyncio.wait_for(engine.call(list, engine.exec_output(api, made["Id"], seconds + 30)),
                                                     seconds + 60))
        except TimeoutError:
            return Ran(None, "")
        code = (await engine.call(api.exec_inspect, made["Id"])).get("ExitCode")
        return Ran(code, output.decode(errors="replace"))

    async def put(self, folder: str, files: dict[str, str], executable: set[str]) -> None:
        """`files` under `folder`, root's, readable by all."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for path, text in files.items():
                data = text.encode()
                info = tarfile.TarInfo(path)
                info.size, info.mode, info.uid, info.gid = len(data), 0o755 if path in executable else 0o644, 0, 0
                tar.addfile(info, io.BytesIO(data))
        if not await engine.call(self.container.put_archive, folder, buf.getvalue()):
            raise SandboxError(f"could not upload the tests to {folder}")

    async def stop(self) -> None:
        """Every process in it ends now: nothing runs on after the tests to rewrite what they wrote."""
        await engine.call(self.container.kill)

    async def read(self, path: str) -> bytes | None:
        """A regular file's bytes as the engine reads them; None when it is absent or not a file."""
        try:
            stream, _ = await engine.call(self.container.get_archive, path)
            data = b"".join(stream)
        except EngineError:
            return None
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            member = tar.next()
            if member is None or not member.isfile():
                return None
            extracted = tar.extractfile(member)
            return extracted.read() if extracted else None

    async def close(self) -> None:
        await asyncio.shield(engine.call(engine.discard, self.container))


class ServicesRun(StateRun):
    """A container of a frozen state that runs the agent's services, offline, for the tests'
    container to join in its network alone (`StateRun.create(beside=...)`): no process, file or
    volume of one is the other's."""

    async def serve(self, services: list[Service], seconds: float) -> list[str]:
        """Start each service as it was started (argv, user, work dir, environment), in order, then
        wait up to `seconds` for their ports: what did not come back, in words."""
        await self.start()
        api, failed = engine.client().api, []
        for service in services:
            try:
                made = await engine.call(api.exec_create, self.container.id, service.argv, user=f"{service.uid}:{service.gid}",
                                         workdir=service.cwd, environment=[f"{k}={v}" for k, v in service.env.items()])
                await engine.call(api.exec_start, made["Id"], detach=True)
            except EngineError as exc:
                failed.append(f"{service.argv[0]} did not start ({str(exc)[-200:]})")
        wanted = {port for service in services for port in service.ports}
        deadline = asyncio.get_running_loop().time() + seconds
        while True:
            missing = wanted - set(listening((await self.run(["cat", *NET_TABLES], 30)).output).values())
            if not missing or asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(PORT_POLL_SECONDS)
        return failed + [f"port {port} never listened again" for port in sorted(missing, key=str)]
