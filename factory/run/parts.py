"""What each stage of a run receives of the pipeline, cut from it in one place (the run, `factory
run --dry-run`): each gets its part, never the whole `Pipeline` (tests/test_parts.py).

    plan_of        the scheduler's `Plan`, which the forecast plays too
    terms_of       the budget's `Terms` (inside the plan)
    executor_site  the executor's `Site`
    Keeper(pipeline.filters)    the keeper: its config section as it is
"""

from __future__ import annotations

from factory.config import Pipeline, teacher_label
from factory.executor.site import Site
from factory.protocols import Teacher
from factory.records import Task
from factory.run.budget import Terms, first_ceiling
from factory.run.folder import RunStore
from factory.run.progress import Progress
from factory.run.scheduler import Plan
from factory.tasks.sources import tasks_by_source


def plan_of(pipeline: Pipeline) -> Plan:
    """What the scheduler (and the forecast) gets of the pipeline."""
    return Plan(sampling=pipeline.sampling, filters=pipeline.filters, verifications=pipeline.verifier.concurrency(),
                max_wall_seconds=pipeline.agent.max_wall_seconds, budget=terms_of(pipeline))


def terms_of(pipeline: Pipeline) -> Terms:
    """What the budget gets of the pipeline: its limit, and each teacher's ceiling from its price."""
    return Terms(limit=pipeline.budget.max_cost_usd, per_attempt=pipeline.agent.max_cost_usd,
                 first={teacher_label(t): first_ceiling(t, pipeline.agent) for t in pipeline.teachers})


def executor_site(pipeline: Pipeline, store: RunStore, tasks: list[Task], teachers: dict[str, Teacher],
                  paid: set[str], progress: Progress) -> Site:
    """What the executor gets of the run: the settings of the stages an attempt passes through,
    the teachers, and the run folder's journal for the `paid` teachers' turns."""
    return Site(
        run_id=store.run_id, executor=pipeline.executor, agent=pipeline.agent, sandbox=pipeline.sandbox,
        verifier=pipeline.verifier, teachers=teachers,
        teacher_configs={teacher_label(t): t for t in pipeline.teachers},
        journal=lambda key: store.journal_path(key) if key.teacher in paid else None,
        tasksets=[(str(folder) if (folder := pipeline.resolve(source)).is_dir() else None, its_tasks)
                  for source, its_tasks in tasks_by_source(pipeline.tasks, tasks)],
        note=progress.note)
