"""Executors by kind (`executor.kind`): where a run's attempts run.

    local   this process: a warm pool and a verifier against this machine's engine (local.py)
    ray     the nodes of a Ray cluster (cluster.py); Ray itself loads when a run opens it

A new executor is its module, with an `open` that yields what the scheduler runs attempts with
(`executor=`, or `pool=` and `verifier=`), and one `EXECUTORS.add` below.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from factory.config import Pipeline
from factory.executor import cluster
from factory.executor.local import open_local
from factory.protocols import Teacher
from factory.records import Task
from factory.registry import Registry
from factory.run.folder import RunStore
from factory.run.progress import Progress

Open = Callable[[Pipeline, RunStore, list[Task], dict[str, Teacher], set[str], Progress],
                AbstractAsyncContextManager[dict[str, Any]]]


def nothing_to_check(pipeline: Pipeline) -> None:
    return None


@dataclass(frozen=True)
class ExecutorKind:
    open: Open
    """What the scheduler runs a run's attempts with, closed (with what it started) at the run's end."""
    check: Callable[[Pipeline], None] = nothing_to_check
    """Before the run folder exists: what can be known to fail (Ray not installed, no cluster)."""


EXECUTORS: Registry[ExecutorKind] = Registry("executor")
EXECUTORS.add("local", ExecutorKind(open_local))
EXECUTORS.add("ray", ExecutorKind(cluster.open_ray, check=cluster.check))
