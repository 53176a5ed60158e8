"""Where attempts run: this machine (`local`) or a Ray cluster (`ray`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from factory.section import Section


def _registered(kind: str) -> str:
    # imported here: the executors' module imports the pipeline's, which imports this one
    from factory.executor.kinds import EXECUTORS

    return EXECUTORS.check(kind)


class ExecutorConfig(Section):
    kind: Annotated[str, AfterValidator(_registered)] = "local"
    """`local`: attempts run in this process against this machine's Docker engine. `ray`: each
    attempt (sandbox, agent loop, verification) runs on a node of a Ray cluster, against that
    node's own engine; this process keeps the run folder, journal, warehouse and decisions."""
    address: str = Field(default="auto", min_length=1)
    """Ray only: `auto` joins the cluster this machine belongs to (`RAY_ADDRESS`, or one that
    `ray start` began here), else starts a local one; or the head's `HOST:PORT`."""
    resource: str = Field(default="factory_sandbox", min_length=1)
    """Ray only: the per-node resource that says how many sandboxes a node holds (`ray start
    --resources '{"factory_sandbox": 8}'`); every sampling and verification takes one."""
