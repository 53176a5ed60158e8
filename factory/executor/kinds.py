"""Executors by kind (`executor.kind`): where a run's attempts run, opened in one place.

    local   this process: a warm pool and a verifier against this machine's engine (local.py)
    ray     the nodes of a Ray cluster (cluster.py); Ray itself loads when a run opens it

    async with open_executor(site) as executor:     # the scheduler takes it; it never builds one
        ...

An executor receives the settings of the stages an attempt passes through (`Site`), never the
whole pipeline. A new executor is its module, with an `open(site)` that yields an `Executor`
(`factory.protocols`), and one `EXECUTORS.add` below.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from factory.executor import cluster
from factory.executor.config import EXECUTORS, ExecutorConfig, ExecutorKind
from factory.executor.local import open_local
from factory.executor.site import Site
from factory.protocols import Executor

EXECUTORS.add("local", ExecutorKind(open_local))
EXECUTORS.add("ray", ExecutorKind(cluster.open_ray, check=cluster.check))


def check_executor(config: ExecutorConfig) -> None:
    """Before the run folder exists: what can be known to fail (Ray not installed, no cluster)."""
    EXECUTORS.get(config.kind).check(config)


def open_executor(site: Site) -> AbstractAsyncContextManager[Executor]:
    """The one place an executor is made: the kind `site.executor.kind` names, opened for the run."""
    return EXECUTORS.get(site.executor.kind).open(site)
