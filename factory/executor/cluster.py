"""The Ray executor: each attempt's sampling and verification run as Ray tasks on the nodes of a
cluster, placed by a per-node resource (`executor.resource`: how many sandboxes a node holds).

    this process (driver): scheduler, run folder, journal (through the gateway), warehouse, keeper
        │ task + settings ─►  node: sandbox (its own Docker engine and images) ⇄ agent loop ─► diff
        │ ◄─ trajectory            └─ teacher calls ─► TeacherGateway actor, on the driver's node
        │ task + patch ─►     node: verifier in a fresh container
        │ ◄─ verdict

Only tasks, settings, trajectories and verdicts travel; never images, never API keys (those
stay with the gateway). A node that dies mid-attempt fails its Ray task (no Ray retry: the
scheduler redoes it, elsewhere, as an infrastructure failure, and the nodes still alive reap
the containers of dead processes of the run). A driver killed with kill -9 takes its gateway
and tasks with it (Ray's fate sharing); the same command resumes, and each node reaps what the
dead run left at the start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

from pydantic import SecretStr

from factory.errors import UsageError, VerifyError
from factory.executor.config import ExecutorConfig
from factory.executor.gateway import TeacherGateway
from factory.executor.late import LateWork
from factory.executor.node import (
    NodeSettings,
    TeacherInfo,
    prepare_node,
    reap_node,
    sample_on_node,
    session_id,
    verify_on_node,
)
from factory.executor.site import Site
from factory.protocols import Sampled
from factory.records import AttemptKey, Exit, Task, Trajectory, Verdict

log = logging.getLogger(__name__)
GRACE_SECONDS = 60.0
"""How long past its wall limit the driver waits for an attempt's Ray task (a hung node)."""


class RayExecutor:
    def __init__(self, site: Site, started_cluster: bool):
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.ray = ray
        self.site = site
        self.started_cluster = started_cluster
        self.late = LateWork()
        """Work past its attempt's deadline, finishing unawaited (the scheduler drains it)."""
        self.info = {label: TeacherInfo(t.name, t.model, bool(getattr(t, "scripted", False)))
                     for label, t in site.teachers.items()}
        here = ray.get_runtime_context().get_node_id()
        self.gateway = ray.remote(TeacherGateway).options(
            num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False),
        ).remote(_gateway_configs(site.teacher_configs))
        self.settings = ray.put(NodeSettings(site.run_id, site.agent, site.sandbox, site.verifier))
        work = {"num_cpus": 0, "resources": {site.executor.resource: 1}, "max_retries": 0,
                "scheduling_strategy": "SPREAD"}
        self._sample = ray.remote(sample_on_node).options(**work)
        self._verify = ray.remote(verify_on_node).options(**work)
        self._tasks: dict[str, Any] = {}  # each task's record in the object store, put once
        self.reaping: list[Any] = []

    @classmethod
    async def start(cls, site: Site) -> tuple[RayExecutor, int]:
        """Join (or start) the cluster, check it has sandbox nodes, and prepare each of them;
        also returns how many containers of dead processes of this run the nodes removed."""
        import ray

        started = _connect(site.executor, site.sandbox.max_live)
        try:
            executor = cls(site, started)
            nodes = executor.sandbox_nodes()
            if not nodes:
                raise UsageError(
                    f"executor.resource: no node of the Ray cluster has the resource {site.executor.resource!r}; "
                    f"start the workers with `ray start --address HEAD:PORT --resources "
                    f"'{{\"{site.executor.resource}\": 8}}'`")
            prepared = await asyncio.gather(*(executor._on(node, prepare_node).remote(
                site.run_id, site.tasksets, site.sandbox.backend) for node in nodes))
        except BaseException:
            ray.shutdown()
            raise
        return executor, sum(reaped for _, reaped in prepared)

    def sandbox_nodes(self) -> list[str]:
        resource = self.site.executor.resource
        return [n["NodeID"] for n in self.ray.nodes() if n["Alive"] and n["Resources"].get(resource, 0) > 0]

    def _on(self, node: str, fn: Any) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        return self.ray.remote(fn).options(num_cpus=0, max_retries=0,
                                           scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))

    def _task(self, task: Task) -> Any:
        if task.instance_id not in self._tasks:
            self._tasks[task.instance_id] = self.ray.put(task)
        return self._tasks[task.instance_id]

    def prewarm(self, task: Task) -> None:
        """Nothing ahead of need: a node starts its sandbox when the attempt lands there."""

    def done_with(self, image: str) -> None:
        """Nothing: each node pulls what its attempts need into its own engine, per attempt, and
        `sandbox.image_cache_gb` does not bound a node's disk yet (docs/run.md)."""

    async def sample(self, task: Task, key: AttemptKey, seed: int, deadline: float) -> Sampled:
        from ray.exceptions import RayError, RayTaskError

        sid = session_id(key)
        journal = self.site.journal(key)
        await self.gateway.open.remote(sid, key.teacher, None if journal is None else str(journal))
        seconds = max(deadline - time.monotonic(), 0.0)
        billed: list = []
        ref = self._sample.remote(self.settings, self._task(task), key, seed, seconds, self.gateway, self.info[key.teacher])
        try:
            trajectory, node = await self._result(ref, seconds + GRACE_SECONDS)
        except RayTaskError as exc:  # raised by our code on the node: as the local executor would raise it
            raise _cause(exc) from None
        except (RayError, TimeoutError) as exc:  # the node died, its worker crashed, or it hangs
            self.reap_soon()
            why = "did not answer in time" if isinstance(exc, TimeoutError) else _first_line(exc)
            trajectory = Trajectory(instance_id=key.instance_id, teacher=key.teacher, model=self.info[key.teacher].model,
                                    messages=[], exit=Exit.sandbox_error,
                                    error=f"NodeLost: {type(exc).__name__}: the Ray node of the attempt {why}")
            node = None
        finally:
            with contextlib.suppress(RayError):
                billed = await self.gateway.close.remote(sid)
        trajectory.possibly_billed = billed
        return Sampled(trajectory, node)

    async def verify(self, task: Task, patch: str) -> Verdict:
        from ray.exceptions import RayError, RayTaskError

        lost: list[str] = []
        for _ in range(self.site.verifier.infra_retries + 1):
            try:
                return await self._result(self._verify.remote(self.settings, self._task(task), patch))
            except RayTaskError as exc:
                raise _cause(exc) from None
            except RayError as exc:  # the node died under it: verified again on another
                self.reap_soon()
                lost.append(_first_line(exc))
        raise VerifyError(f"the Ray node verifying it was lost {len(lost)} time(s): {lost[-1]}")

    async def _result(self, ref: Any, timeout: float | None = None) -> Any:
        async def wait() -> Any:
            return await ref

        try:
            return await asyncio.wait_for(wait(), timeout)
        except (asyncio.CancelledError, TimeoutError):
            self.ray.cancel(ref, force=True)  # its worker ends; the containers it held are reaped
            raise

    def reap_soon(self) -> None:
        """Containers of dead processes of this run, removed on every node still alive."""
        self.reaping.extend(self._on(node, reap_node).remote(self.site.run_id, self.site.sandbox.backend)
                            for node in self.sandbox_nodes())

    async def close(self) -> None:
        from ray.exceptions import RayError

        try:
            self.reap_soon()  # what a node's worker left as it died, now that its processes are gone
            with contextlib.suppress(RayError):
                await asyncio.gather(*self.reaping)
                await self.gateway.aclose.remote()
        finally:
            self.ray.shutdown()  # leaves a cluster it joined running; one it started, it stops


@contextlib.asynccontextmanager
async def open_ray(site: Site) -> AsyncIterator[RayExecutor]:
    """The cluster's executor for a run; closed when the run ends."""
    executor, reaped = await RayExecutor.start(site)
    if reaped:
        site.note(f"the Ray nodes removed {reaped} container(s) left by an earlier, crashed process of this run")
    try:
        yield executor
    finally:
        await executor.close()


def check(config: ExecutorConfig) -> None:
    """Before a run folder exists: Ray is installed, and a given address takes connections (Ray
    itself would retry an address where nothing listens for minutes)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError("executor.kind: `ray` needs Ray installed: pip install 'factory[ray]'") from None
    address = config.address
    if address == "auto":
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"executor.address: {address!r} is not HOST:PORT (the head's, as `ray start --head` prints it) "
                         "or auto")
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as exc:
        raise UsageError(f"executor.address: no Ray cluster answers at {address} ({exc.strerror or exc}); "
                         "start one with `ray start --head`, or give `auto`") from None


def _connect(config: ExecutorConfig, sandboxes: int) -> bool:
    """ray.init as `executor.address` says; True when it started a local cluster (this machine,
    with `sandboxes` sandbox slots)."""
    import ray

    check(config)
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
    if ray.is_initialized():
        ray.shutdown()
    if config.address == "auto":
        try:
            ray.init(address="auto", **quiet)
            return False
        except ConnectionError:  # no cluster here: this machine is one, with its sandbox slots
            ray.init(resources={config.resource: sandboxes}, include_dashboard=False, **quiet)
            return True
    try:
        ray.init(address=config.address, **quiet)
    except Exception as exc:  # ConnectionError, or a malformed address
        raise UsageError(f"executor.address: no Ray cluster answers at {config.address!r} ({_first_line(exc)}); "
                         "give the head's HOST:PORT (`ray start --head` prints it), or `auto`") from None
    return False


def _gateway_configs(teachers: dict[str, Any]) -> dict[str, Any]:
    """Each teacher's config with its API key read here, from this process's environment: the
    gateway's process (a Ray worker) need not have it."""
    configs = {}
    for label, config in teachers.items():
        resolve = getattr(config, "resolve_api_key", None)
        key = resolve(required=False) if resolve is not None else None
        configs[label] = config.model_copy(update={"api_key": SecretStr(key)}) if key else config
    return configs


def _cause(exc: Any) -> BaseException:
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, Exception) else RuntimeError(_first_line(exc))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines() or [type(exc).__name__])[0][:300]
