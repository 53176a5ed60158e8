"""Where attempts run: this machine (`local`) or a Ray cluster (`ray`)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from pydantic import AfterValidator, Field

from factory.registry import Registry
from factory.section import Section

if TYPE_CHECKING:
    from factory.executor.site import Site
    from factory.protocols import Executor

Open = Callable[["Site"], AbstractAsyncContextManager["Executor"]]


def nothing_to_check(config: ExecutorConfig) -> None:
    return None


@dataclass(frozen=True)
class ExecutorKind:
    open: Open
    """The run's executor, closed (with what it started) at the run's end."""
    check: Callable[[ExecutorConfig], None] = nothing_to_check
    """Before the run folder exists: what can be known to fail (Ray not installed, no cluster)."""


EXECUTORS: Registry[ExecutorKind] = Registry("executor")
"""Filled by `factory.executor.kinds` (which the package imports), so a config naming a kind is
checked against every executor there is, and this module imports none of them."""


class ExecutorConfig(Section):
    kind: Annotated[str, AfterValidator(EXECUTORS.check)] = "local"
    """`local`: attempts run in this process against this machine's Docker engine. `ray`: each
    attempt (sandbox, agent loop, verification) runs on a node of a Ray cluster, against that
    node's own engine; this process keeps the run folder, journal, warehouse and decisions."""
    address: str = Field(default="auto", min_length=1)
    """Ray only: `auto` joins the cluster this machine belongs to (`RAY_ADDRESS`, or one that
    `ray start` began here), else starts a local one; or the head's `HOST:PORT`."""
    resource: str = Field(default="factory_sandbox", min_length=1)
    """Ray only: the per-node resource that says how many sandboxes a node holds (`ray start
    --resources '{"factory_sandbox": 8}'`); every sampling and verification takes one."""
