"""Where attempts run: `local` (this process) or `ray` (the nodes of a Ray cluster).

    scheduler (decides) ─► Executor.sample / .verify ─► LocalExecutor: pool + agent loop + verifier here
                                                    └► RayExecutor: the same, as Ray tasks on the nodes;
                                                       teacher calls come back to the gateway on this node

`open_executor(site)` is the one place an executor is made; the kinds register in kinds.py.
Ray itself loads only when a run opens a Ray executor.
"""

from factory.executor.config import ExecutorConfig
from factory.executor.kinds import check_executor, open_executor
from factory.executor.site import Site

__all__ = ["ExecutorConfig", "Site", "check_executor", "open_executor"]
