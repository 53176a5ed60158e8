"""The Docker engine behind every sandbox: one client, one thread pool, labels, cleanup.

The docker SDK is synchronous, so each call runs in a dedicated thread pool sized for
hundreds of concurrent sandboxes (asyncio's default pool has only a handful of threads).
Every container factory creates carries labels, so leftovers can always be found:

    factory=1  factory.run=<run id>  factory.attempt=<attempt id>
    factory.host=<hostname>  factory.pid=<pid of the factory process>
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import docker
from docker.errors import DockerException, NotFound

from factory.errors import SandboxError

T = TypeVar("T")

LABEL = "factory"
LABEL_RUN = "factory.run"
LABEL_ATTEMPT = "factory.attempt"
LABEL_HOST = "factory.host"
LABEL_PID = "factory.pid"


@functools.cache
def client() -> docker.DockerClient:
    """The shared client; a missing engine is an error that says what to do."""
    try:
        c = docker.from_env(max_pool_size=256, timeout=120)
        c.ping()
    except DockerException as exc:
        raise SandboxError(f"no Docker engine answers ({exc}); run `make docker` or set DOCKER_HOST") from exc
    return c


_pool = ThreadPoolExecutor(max_workers=256, thread_name_prefix="docker")


async def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a blocking docker SDK call off the event loop."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_pool, functools.partial(fn, *args, **kwargs))


def labels(run_id: str, attempt_id: str) -> dict[str, str]:
    return {
        LABEL: "1",
        LABEL_RUN: run_id,
        LABEL_ATTEMPT: attempt_id,
        LABEL_HOST: socket.gethostname(),
        LABEL_PID: str(os.getpid()),
    }


def _owner_alive(container_labels: dict[str, str]) -> bool:
    if container_labels.get(LABEL_HOST) != socket.gethostname():
        return True  # another machine's factory: not ours to judge
    try:
        os.kill(int(container_labels.get(LABEL_PID, "0")), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return int(container_labels.get(LABEL_PID, "0")) > 0


def remove_containers(*, run_id: str | None = None, everything: bool = False, exclude_pid: int | None = None) -> int:
    """Remove factory containers: of one run, of dead factory processes, or all of them.

    `exclude_pid` spares containers owned by a live process (the caller itself, when a run
    reaps the leftovers of its own earlier crashed attempt).
    """
    filters = {"label": [f"{LABEL}=1"] + ([f"{LABEL_RUN}={run_id}"] if run_id else [])}
    removed = 0
    for container in client().containers.list(all=True, filters=filters):
        owner = container.labels.get(LABEL_PID)
        if exclude_pid is not None and owner == str(exclude_pid):
            continue
        if not (everything or run_id or not _owner_alive(container.labels)):
            continue
        try:
            container.remove(force=True)
            removed += 1
        except NotFound:
            pass
    return removed


def reap_run(run_id: str) -> int:
    """At the start of a (resumed) run: remove containers its earlier, crashed processes left."""
    return remove_containers(run_id=run_id, exclude_pid=os.getpid())
