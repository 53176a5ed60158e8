"""Which runs a task keeps, decided as attempts finish by the filter chain that builds the dataset.

Its count of a task's rows comes from the pipeline's own `filters:` section, and the allocator
(`factory.run.allocation`, the one place the cap is decided) stops a task on it, so a run stops
paying for a task exactly when the dataset it writes would hold `filters.cap.per_task` rows of it:

    keeper = Keeper(pipeline.filters)
    keeper.add(attempt)                 # as each attempt finishes (or is read back on resume)
    keeper.kept(task_id)                # the task's rows as `factory build` would write them

The filters in front of the first per-task filter (resolved, loops, length) judge each attempt
once, when it is added; the rest of the chain (dedup, cap, secrets) runs over the task's
survivors each time one is added. Per-attempt filters see one attempt and per-task filters one
task, so the rows kept per task are those of the chain run over every attempt of the run. With
the cap turned off nothing stops a task early: every attempt of `sampling.attempts_per_task`
is made.
"""

from __future__ import annotations

from collections import defaultdict

from factory.filters import FilterChain, FiltersConfig, TaskFilter, TokenCounter
from factory.records import Attempt


class Keeper:
    def __init__(self, filters: FiltersConfig, count_tokens: TokenCounter | None = None):
        chain = FilterChain.from_config(filters, count_tokens=count_tokens).filters
        split = next((i for i, f in enumerate(chain) if isinstance(f, TaskFilter)), len(chain))
        self.each = FilterChain(chain[:split])
        """Filters that judge one attempt on its own: run once per attempt."""
        self.rest = FilterChain(chain[split:])
        """The rest of the chain, over a task's attempts that passed `each`."""
        self._passed: dict[str, list[Attempt]] = defaultdict(list)
        self._kept: dict[str, list[Attempt]] = {}
        self.total = 0
        """Rows kept over all tasks so far."""

    def add(self, attempt: Attempt) -> bool:
        """Take a finished attempt into its task's group; True if it passed the per-attempt filters."""
        if not self.each.run([attempt]).kept:
            return False
        task = attempt.key.instance_id
        self._passed[task].append(attempt)
        self.total -= len(self.kept(task))
        self._kept[task] = self.rest.run(self._passed[task]).kept
        self.total += len(self._kept[task])
        return True

    def kept(self, task: str) -> list[Attempt]:
        return self._kept.get(task, [])

