"""What a Ray node runs: one attempt's sampling, one verification, and the node's own setup.

Each is a plain function that Ray calls in a worker process of the node; it runs the local
executor's code against the node's own Docker engine and image cache, with the pool and verifier
that the worker process keeps for its life (`Node`). What comes in is the
task and the settings of the stages (no API key: teacher calls go back to the gateway);
what goes back is the trajectory or the verdict, and the node's id.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from factory.agent.config import AgentConfig
from factory.executor.gateway import GatewayTeacher
from factory.executor.local import LocalExecutor
from factory.records import AttemptKey, Task, Trajectory, Verdict
from factory.sandbox.config import SandboxConfig
from factory.verify.config import VerifierConfig

T = TypeVar("T")


@dataclass(frozen=True)
class NodeSettings:
    """The pipeline's settings an attempt needs on a node, and nothing else (no teacher config)."""

    run_id: str
    agent: AgentConfig
    sandbox: SandboxConfig
    verifier: VerifierConfig


@dataclass(frozen=True)
class TeacherInfo:
    name: str
    model: str
    scripted: bool


def node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


class Node:
    """This worker process's sandbox pool and verifier, kept for the process's life (not built
    again for every attempt): they live on an event loop of their own, in a thread, that each
    call of Ray's runs its work on. The process ends with the run (or is killed by Ray), and
    the nodes reap what a dead process left (`reap_node`)."""

    def __init__(self, settings: NodeSettings):
        from factory.sandbox.pool import SandboxPool
        from factory.verify import DockerVerifier

        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="factory-node", daemon=True).start()
        self.pool = SandboxPool(settings.sandbox.model_copy(update={"warm": 0}), run_id=settings.run_id)
        self.verifier = DockerVerifier(settings.verifier, settings.sandbox, run_id=settings.run_id)
        self.id = node_id()

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result()


_nodes: dict[str, Node] = {}
"""This process's `Node`, by run id."""


def this_node(settings: NodeSettings) -> Node:
    if settings.run_id not in _nodes:
        _nodes[settings.run_id] = Node(settings)
    return _nodes[settings.run_id]


def sample_on_node(settings: NodeSettings, task: Task, key: AttemptKey, seed: int, seconds: float,
                   gateway: Any, teacher: TeacherInfo) -> tuple[Trajectory, str]:
    """One attempt's sampling within `seconds` of wall time, as `LocalExecutor.sample` does it."""
    node = this_node(settings)
    return node.run(_sample(node, settings, task, key, seed, seconds, gateway, teacher))


async def _sample(node: Node, settings: NodeSettings, task: Task, key: AttemptKey, seed: int, seconds: float,
                  gateway: Any, teacher: TeacherInfo) -> tuple[Trajectory, str]:
    teachers = {key.teacher: GatewayTeacher(gateway, session_id(key), teacher.name, teacher.model, teacher.scripted)}
    executor = LocalExecutor(node.pool, None, teachers, settings.agent, node=node.id)
    try:
        sampled = await executor.sample(task, key, seed, time.monotonic() + seconds)
        await executor.late.drain()
    finally:
        await executor.late.cancel()
        # the attempt's container is gone before its Ray task ends, as when the pool closed with it
        await asyncio.gather(*node.pool.removing, return_exceptions=True)
    return sampled.trajectory, node.id


def verify_on_node(settings: NodeSettings, task: Task, patch: str) -> Verdict:
    node = this_node(settings)
    return node.run(node.verifier.verify(task, patch))


def prepare_node(run_id: str, tasksets: list[tuple[str | None, list[Task]]], backend: str) -> tuple[str, int]:
    """At the start of a run, on each node: remove the containers that dead processes of this run
    left here, and build each local task set's missing images where this node has its folder
    (`tasksets`: each source's folder, None for a Hub source, with its tasks), on the sandbox
    `backend` of the run."""
    from factory.sandbox.backend import sandbox_backend
    from factory.sandbox.images import ensure_local_images

    reaped = sandbox_backend(backend).reap_run(run_id)
    for taskset, tasks in tasksets:
        if taskset is not None and Path(taskset).is_dir():
            ensure_local_images(Path(taskset), tasks, backend=backend)
    return node_id(), reaped


def reap_node(run_id: str, backend: str) -> tuple[str, int]:
    """Remove this run's containers on this node whose owning process is dead (an attempt of a
    worker that died, a driver killed before)."""
    from factory.sandbox.backend import sandbox_backend

    return node_id(), sandbox_backend(backend).reap_run(run_id)


def session_id(key: AttemptKey) -> str:
    return f"{key.instance_id}\x00{key.teacher}\x00{key.index}"
