"""Where attempts run: `local` (this process) or `ray` (the nodes of a Ray cluster).

    scheduler (decides) ─► Executor.sample / .verify ─► LocalExecutor: pool + agent loop + verifier here
                                                    └► RayExecutor: the same, as Ray tasks on the nodes;
                                                       teacher calls come back to the gateway on this node

Only `ExecutorConfig` is imported here: Ray loads when a run asks for it.
"""

from factory.executor.config import ExecutorConfig

__all__ = ["ExecutorConfig"]
