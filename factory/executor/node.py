"""What a Ray node runs: one attempt's sampling, one verification, and the node's own setup.

Each is a plain function that Ray calls in a worker process of the node; it runs the local
executor's code against the node's own Docker engine and image cache. What comes in is the
task and the settings of the stages (no API key: teacher calls go back to the gateway);
what goes back is the trajectory or the verdict, and the node's id.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factory.agent.config import AgentConfig
from factory.executor.gateway import GatewayTeacher
from factory.executor.late import LateWork
from factory.executor.local import LocalExecutor
from factory.records import AttemptKey, Task, Trajectory, Verdict
from factory.sandbox.config import SandboxConfig
from factory.verify.config import VerifierConfig


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


def sample_on_node(settings: NodeSettings, task: Task, key: AttemptKey, seed: int, seconds: float,
                   gateway: Any, teacher: TeacherInfo) -> tuple[Trajectory, str]:
    """One attempt's sampling within `seconds` of wall time, as `LocalExecutor.sample` does it."""
    return asyncio.run(_sample(settings, task, key, seed, seconds, gateway, teacher))


async def _sample(settings: NodeSettings, task: Task, key: AttemptKey, seed: int, seconds: float,
                  gateway: Any, teacher: TeacherInfo) -> tuple[Trajectory, str]:
    from factory.sandbox.pool import SandboxPool

    late = LateWork()
    teachers = {key.teacher: GatewayTeacher(gateway, session_id(key), teacher.name, teacher.model, teacher.scripted)}
    node = node_id()
    try:
        async with SandboxPool(settings.sandbox.model_copy(update={"warm": 0}), run_id=settings.run_id) as pool:
            executor = LocalExecutor(pool, None, teachers, settings.agent, late=late, node=node)
            sampled = await executor.sample(task, key, seed, time.monotonic() + seconds)
            await late.drain()
    finally:
        await late.cancel()
    return sampled.trajectory, node


def verify_on_node(settings: NodeSettings, task: Task, patch: str) -> Verdict:
    from factory.verify import DockerVerifier

    verifier = DockerVerifier(settings.verifier, settings.sandbox, run_id=settings.run_id)
    return asyncio.run(verifier.verify(task, patch))


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
