"""The Docker engine behind every sandbox: one client, one thread pool, labels, cleanup.

The docker SDK is synchronous, so each call runs in a dedicated thread pool sized for
hundreds of concurrent sandboxes (asyncio's default pool has only a handful of threads).
Every container factory creates carries labels, so leftovers can always be found:

    factory=1  factory.run=<run id>  factory.attempt=<attempt id>
    factory.host=<hostname>  factory.pid=<pid of the factory process>
    factory.pid.start=<its start time, clock ticks since boot: pids are reused>

and any labels of the caller's own from `FACTORY_LABELS` (`extra_labels`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import os
import socket
import struct
import threading
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import docker
import urllib3
from docker.errors import APIError, DockerException, NotFound
from docker.models.containers import _create_container_args

from factory.errors import EngineError, EngineGone, SandboxError

T = TypeVar("T")

LABEL = "factory"
LABEL_RUN = "factory.run"
LABEL_ATTEMPT = "factory.attempt"
LABEL_HOST = "factory.host"
LABEL_PID = "factory.pid"
LABEL_PID_START = "factory.pid.start"
LABEL_TASK_IMAGE = "factory.task-image"
"""On a run's task image (`factory.sandbox.docker.task_image`), beside the run's labels: its key."""
EXTRA_LABELS = "FACTORY_LABELS"

log = logging.getLogger(__name__)


_url: str | None = None
"""The engine the shared client talks to (`connect`); None: DOCKER_HOST or the default socket."""


def connect(url: str | None) -> None:
    """Point the shared client at the engine on `url`: a backend that speaks the Docker API
    elsewhere (rootless Podman's socket) calls this before each use. One engine at a time per
    process: a run has one `sandbox.backend`, and its sandboxes hold no client of their own."""
    global _url
    if url != _url:
        _url = url
        client.cache_clear()


@functools.cache
def client() -> docker.DockerClient:
    """The shared client; a missing engine is an error that says what to do."""
    try:
        c = (docker.DockerClient(base_url=_url, max_pool_size=256, timeout=120) if _url
             else docker.from_env(max_pool_size=256, timeout=120))
        c.ping()
    except DockerException as exc:
        where = f"on {_url}; run `make podman`" if _url else "; run `make docker` or set DOCKER_HOST"
        raise SandboxError(f"no engine answers ({exc}) {where}") from exc
    return c


_pool = ThreadPoolExecutor(max_workers=256, thread_name_prefix="docker")


_undoing: set[concurrent.futures.Future] = set()
"""Calls whose caller was cancelled and whose work is undone when they land (`made`)."""


async def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a blocking docker SDK call off the event loop; engine failures become `EngineError`.

    Whatever the engine or the connection to it does (an API error, a 404, a dropped stream,
    a timeout) is infrastructure, so it is typed as such here, where it enters, and never
    escapes as a docker-py, requests or socket error that a caller would have to know about.
    """
    return await _typed(asyncio.get_running_loop().run_in_executor(_pool, functools.partial(fn, *args, **kwargs)))


async def made(fn: Callable[..., T], *args: Any, undo: Callable[[T], object], **kwargs: Any) -> T:
    """`call` for a call that makes something on the engine (creates a container, starts one).

    Cancelling the caller cannot stop the engine once the request is sent: the thread goes on,
    the engine makes the thing, and nobody holds it. So a cancelled caller leaves the call
    running and `undo` is applied to what it makes when it lands (`settled` waits for that)."""
    work = _pool.submit(fn, *args, **kwargs)
    landing = asyncio.wrap_future(work)
    landing.add_done_callback(lambda f: f.cancelled() or f.exception())  # read here, told by `_typed` or undone
    try:
        return await _typed(asyncio.shield(landing))
    except asyncio.CancelledError:
        undoing = _pool.submit(_undo_when_landed, work, undo)
        _undoing.add(undoing)
        undoing.add_done_callback(_undoing.discard)
        raise


def _undo_when_landed(work: concurrent.futures.Future, undo: Callable[[Any], object]) -> None:
    try:
        made_thing = work.result()
    except BaseException:  # noqa: BLE001 - it made nothing to undo
        return
    try:
        undo(made_thing)
    except (DockerException, OSError, urllib3.exceptions.HTTPError) as exc:
        log.warning("could not undo what a cancelled engine call made: %s", _explain(exc))


async def settled() -> None:
    """Wait until the work of every cancelled call has landed and been undone (`made`)."""
    while _undoing:
        await asyncio.gather(*(asyncio.wrap_future(f) for f in list(_undoing)))


async def _typed(work: Awaitable[T]) -> T:
    try:
        return await work
    except NotFound as exc:
        raise EngineGone(f"Docker engine: {_explain(exc)}") from exc
    except (DockerException, OSError, urllib3.exceptions.HTTPError) as exc:  # requests' errors are OSErrors
        raise EngineError(f"Docker engine: {type(exc).__name__}: {_explain(exc)}") from exc


def exec_output(api: docker.APIClient, exec_id: str, seconds: float) -> Generator[bytes, None, None]:
    """Start an exec and yield its output (stdout and stderr, as they come) until it ends.

    Read from the HTTP response's own buffered reader, not from the raw socket under it as
    docker-py does: the engine's first bytes often arrive with the response's headers, land in
    that buffer, and the raw socket never sees them. That is how a quick command's whole output
    went missing under load (docker-py issue 2042). A read waits up to `seconds` (the client's
    default would fail a command that is silent for two minutes, such as a long test run).
    """
    response = api._post_json(api._url("/exec/{0}/start", exec_id), headers={"Connection": "Upgrade", "Upgrade": "tcp"},
                              data={"Tty": False, "Detach": False}, stream=True)
    api._raise_for_status(response)
    reader = response.raw._fp.fp  # http.client's buffered reader over the upgraded connection
    reader.raw._sock.settimeout(seconds)
    try:
        while len(header := reader.read(8)) == 8:  # each frame: stream id, 3 zero bytes, length, then data
            size = struct.unpack(">BxxxL", header)[1]
            data = reader.read(size)
            if data:
                yield data
            if len(data) < size:
                return
    finally:
        response.close()


def _explain(exc: Exception) -> str:
    return str(getattr(exc, "explanation", None) or exc)[:500]


def labels(run_id: str, attempt_id: str) -> dict[str, str]:
    owner = {
        LABEL: "1",
        LABEL_RUN: run_id,
        LABEL_ATTEMPT: attempt_id,
        LABEL_HOST: socket.gethostname(),
        LABEL_PID: str(os.getpid()),
    }
    started = _start_time(os.getpid())
    if started is not None:  # no /proc (macOS): the owner is known by its pid alone
        owner[LABEL_PID_START] = started
    return {**extra_labels(), **owner}


def extra_labels() -> dict[str, str]:
    """Labels of the caller's own on everything factory creates (`FACTORY_LABELS="team=nlp job=42"`):
    a scheduler's job id, or a test session that counts what it left behind."""
    pairs = os.environ.get(EXTRA_LABELS, "").replace(",", " ").split()
    return dict(pair.partition("=")[::2] for pair in pairs if "=" in pair)


def _start_time(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, /proc/<pid>/stat field 22), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # field 2, the command name, may itself hold spaces and parentheses: count after its ")"
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def blank_labels(container_labels: dict[str, str]) -> str:
    """A `docker commit` change that clears these labels: a commit keeps the builder container's
    labels, and a container later started from the image without labels of its own would look
    like a dead factory's to `factory clean`."""
    return "LABEL " + " ".join(f'{key}=""' for key in container_labels)


def _owner_alive(container_labels: dict[str, str]) -> bool:
    """Whether the factory process that created a container still runs.

    A pid alone is not an identity (pids are reused), so the owner's start time must match
    too; containers labelled before `factory.pid.start` existed are judged by pid alone.
    """
    if container_labels.get(LABEL_HOST) != socket.gethostname():
        return True  # another machine's factory: not ours to judge
    try:
        pid = int(container_labels.get(LABEL_PID, ""))
    except ValueError:
        return False
    if pid <= 0:
        return False  # 0 and negatives would signal process groups, not a process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, another user's
    started = container_labels.get(LABEL_PID_START)
    now = _start_time(pid)
    # unreadable start time (hidden /proc, or it exited just now): err on the side of alive
    return started is None or now is None or now == started


_image_ids: dict[str, str] = {}
_image_ids_lock = threading.Lock()


def image_id(name: str) -> str:
    """The engine's id of image `name`, asked once per process: the same for every container
    of it, as `start_image` takes a name to be (an image removed since is forgotten by `created`)."""
    found = _image_ids.get(name)
    if found is None:
        with _image_ids_lock:  # the sandboxes of a run start all at once: one asks, the others wait for its answer
            found = _image_ids.get(name)
            if found is None:
                found = _image_ids[name] = client().api.inspect_image(name)["Id"]
    return found


def created(image: str, command: list[str], **kwargs: Any) -> docker.models.containers.Container:
    """A container, created from `image` with docker-py's `containers.create` arguments, in one
    request: docker-py's own follows the create with an inspect of the container, a second round
    trip to the engine per sandbox for attributes the create already settled. The Container comes
    back knowing its id and its image's id (`image_id`), enough for every later call on it."""
    api = client().api
    try:  # docker-py's containers.create turns its arguments into the API's with this same function
        made = api.create_container(**_create_container_args(
            {**kwargs, "image": image, "command": command, "version": api._version}))
    except NotFound:
        _image_ids.pop(image, None)  # gone: an image made again under its name has another id
        raise
    # the id first: a container made whose image then went cannot be left behind
    container = client().containers.prepare_model({"Id": made["Id"]})
    try:
        container.attrs["Image"] = image_id(image)
    except BaseException:
        discard(container)
        raise
    return container


def discard(container: Any) -> None:
    """Remove a container (a docker-py Container) that nobody holds; already gone is fine."""
    _remove(container.id)


def image_tag(name: str) -> str:
    """`name` as an image tag: its characters that a tag may not hold made `-`, its last 120 kept."""
    return "".join(ch if ch.isalnum() or ch in "_.-" else "-" for ch in name)[-120:].lstrip(".-") or "tag"


def discard_image(image: Any) -> None:
    """Remove an image (a docker-py Image) that nobody holds; already gone or in use is fine."""
    try:
        client().api.remove_image(image.id)
    except (DockerException, OSError) as exc:
        log.info("left image %s: %s", image.short_id, _explain(exc))


def _remove(container_id: str) -> bool:
    """Force-remove one container; False when it was already gone or could not be removed.

    Others remove containers too (a concurrent `factory clean`, auto-remove of a killed
    container, the owning run), so "not found" and "removal already in progress" mean gone.
    """
    try:
        client().api.remove_container(container_id, force=True, v=True)  # v: its anonymous volumes too
    except NotFound:
        return False
    except APIError as exc:
        if exc.status_code != 409:  # 409: removal already in progress elsewhere
            log.warning("could not remove container %s: %s", container_id[:12], _explain(exc))
        return False
    except (DockerException, OSError) as exc:  # requests' errors are OSErrors
        log.warning("could not remove container %s: %s", container_id[:12], _explain(exc))
        return False
    return True


def _remove_where(run_id: str | None, *, dead_owners_only: bool) -> int:
    """Remove the containers (the count returned), then the task images, of `run_id` (or of every
    run) whose owner is dead, or of any owner."""
    filters = {"label": [f"{LABEL}=1"] + ([f"{LABEL_RUN}={run_id}"] if run_id else [])}
    try:
        # the low-level list: labels come with it, no per-container inspect that could
        # race with a container disappearing between listing and inspecting
        found = client().api.containers(all=True, filters=filters)
        images = client().api.images(filters={"label": [*filters["label"], LABEL_TASK_IMAGE]})
    except (DockerException, OSError) as exc:
        raise EngineError(f"Docker engine: cannot list containers: {_explain(exc)}") from exc
    doomed = [c["Id"] for c in found if not (dead_owners_only and _owner_alive(c.get("Labels") or {}))]
    removed = sum(_remove(container_id) for container_id in doomed)
    for image in images:  # a task image is a cache of its run: never a leak to tell of
        if not (dead_owners_only and _owner_alive(image.get("Labels") or {})):
            _remove_image(image["Id"])
    return removed


def _remove_image(image_id: str) -> None:
    try:
        client().api.remove_image(image_id, force=True)  # force: its tag too (a run's images have one each)
    except NotFound:
        pass
    except (DockerException, OSError) as exc:
        log.info("could not remove image %s: %s", image_id[:19], _explain(exc))


def remove_containers(*, run_id: str | None = None, everything: bool = False) -> int:
    """What `factory clean` removes; returns how many containers this call removed.

    By default only containers whose owner process is dead; with `run_id` every container
    of that run, live owners included (the user asked for it); with `everything`, all
    factory containers. A container that vanishes meanwhile is skipped, one that cannot be
    removed is a warning, and the rest are still removed.
    """
    return _remove_where(run_id, dead_owners_only=not (everything or run_id))


def reap_run(run_id: str) -> int:
    """At the start of a (resumed) run: remove the containers its dead processes left.

    Containers of a live process of the same run id (a second `factory run --run-id`, the
    caller itself) are never touched.
    """
    return _remove_where(run_id, dead_owners_only=True)


async def remove_left(run_id: str) -> int:
    """At a run's end, however it ends: remove every container of the run still on the engine
    (whoever made it: the run holds its lock, so no other process works for it now), after the
    work of cancelled calls has landed (`settled`). Returns how many there were: each is a leak
    that the run's own cleanup missed, and the caller says so."""
    await settled()
    return await call(_remove_where, run_id, dead_owners_only=False)
