"""`factory run`: one pipeline from tasks to a dataset, resumable by run id.

    load tasks ─► build missing local images ─► reap orphans ─► scheduler (attempts, verdicts,
    warehouse) ─► filters + renderer + dataset + card (build) ─► summary with the funnel
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import logging
import shlex
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from factory.atomic import write_atomic
from factory.config import Pipeline, parse_pipeline, teacher_label
from factory.errors import SandboxError, StorageError, UsageError
from factory.executor import check_executor, open_executor
from factory.filters import ChainResult
from factory.output import (
    BuildSettings,
    BuildSummary,
    CardMeta,
    DrawPlots,
    RenderHooks,
    WrittenDataset,
    build_dataset,
    render_hooks,
)
from factory.protocols import Teacher
from factory.records import Attempt, Task
from factory.render import build_renderer
from factory.report import Plot, draw_plots
from factory.run.folder import RunStore, identity, new_run_id
from factory.run.keeper import Keeper
from factory.run.parts import executor_site, plan_of
from factory.run.progress import Progress
from factory.run.scheduler import RunResult, Scheduler
from factory.sandbox.backend import sandbox_backend
from factory.sandbox.images import ensure_local_images
from factory.tasks import load_tasks
from factory.tasks.sources import tasks_by_source
from factory.teachers import build_teacher
from factory.warehouse import Warehouse, WarehouseBusy

log = logging.getLogger(__name__)

@dataclass
class RunOutcome:
    store: RunStore
    result: RunResult
    build: BuildSummary | None
    skipped_tasks: int
    warehouse_behind: str | None = None
    """How many attempts the warehouse file lacks and why (a reader held it to the end, the disk
    was full): `Warehouse.behind`, `Warehouse.why_behind`."""


def load_run_tasks(pipeline: Pipeline) -> tuple[list[Task], int]:
    """The pipeline's tasks (and how many were skipped), their local images built."""
    tasks, skipped = _load(pipeline)
    _ensure_images(pipeline, tasks)
    return tasks, skipped


def _load(pipeline: Pipeline) -> tuple[list[Task], int]:
    report = load_tasks(pipeline.tasks, base=pipeline.base)
    if not report.tasks:
        raise UsageError(f"no tasks to run from {pipeline.tasks.named()} ({len(report.skipped)} skipped)")
    return report.tasks, len(report.skipped)


def _ensure_images(pipeline: Pipeline, tasks: list[Task]) -> None:
    for source, its_tasks in tasks_by_source(pipeline.tasks, tasks):
        ensure_local_images(pipeline.base / source, its_tasks, backend=pipeline.sandbox.backend)  # built here, never pulled


async def run_pipeline(
    pipeline: Pipeline, *, run_id: str | None, progress: Progress, command: str | None = None,
    allow_changes: bool = False,
) -> RunOutcome:
    """The run, held by this process from start to end (`RunStore.locked`); bad input fails
    before its folder exists, and a run that fails later is marked `failed` with the reason.
    What is known locally (API keys) is checked before anything touches the network (the task
    source may be a Hub dataset, retried for half a minute when the Hub cannot be reached)."""
    teachers = {teacher_label(t): build_teacher(t) for t in pipeline.teachers}  # a missing key fails here
    try:
        check_executor(pipeline.executor)  # so does a cluster that is not there
        tasks, skipped = _load(pipeline)
        store = RunStore(pipeline.resolve(pipeline.output.dir) / (run_id or new_run_id(pipeline.name)))
        with store.locked():
            text = pipeline.path.read_text() if pipeline.path else ""
            store.start(text, command or shlex.join(["factory", *sys.argv[1:]]), str(pipeline.path),
                        # the budget only says when to stop launching, the executor only where attempts
                        # run: a resume may raise the one and move to the other
                        identity(pipeline.model_dump(mode="json", exclude={"budget", "executor"}),
                                 [t.instance_id for t in tasks]),
                        allow_changes, at_default=set(identity(pipeline.model_dump(mode="json"), [])) - set(
                            identity(pipeline.model_dump(mode="json", exclude_defaults=True), [])))
            try:
                outcome = await _run_held(pipeline, store, tasks, skipped, teachers, progress)
            except Exception as exc:
                with contextlib.suppress(StorageError):  # the first error is the one to tell
                    store.save_meta({**store.meta(), "status": "failed", "error": f"{type(exc).__name__}: {exc}"[:1000]})
                raise
            store.save_meta({**store.meta(), "status": outcome.result.stopped or "finished"})
            return outcome
    finally:
        for teacher in teachers.values():
            close = getattr(teacher, "aclose", None)
            if close is not None:
                await close()


async def _run_held(pipeline: Pipeline, store: RunStore, tasks: list[Task], skipped: int,
                    teachers: dict[str, Teacher], progress: Progress) -> RunOutcome:
    _ensure_images(pipeline, tasks)
    reaped = sandbox_backend(pipeline.sandbox.backend).reap_run(store.run_id)
    if reaped:
        progress.note(f"removed {reaped} container(s) left by an earlier, crashed process of this run")

    paid = {teacher_label(t) for t in pipeline.teachers if t.kind != "scripted"}
    warehouse = open_warehouse(pipeline, store, tasks)
    # the renderer loads its vocabulary (a second or two) while the first sandboxes start; it is
    # first needed when an attempt finishes and the keeper counts its tokens
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="renderer") as loader:
        rendering = loader.submit(lambda: render_hooks(build_renderer(template=pipeline.output.template)))
        # the build's own filters and counts
        keeper = Keeper(pipeline.filters, count_tokens=lambda trajectory: rendering.result().count_tokens(trajectory))
        try:
            try:
                async with open_executor(executor_site(pipeline, store, tasks, teachers, paid, progress)) as executor:
                    scheduler = Scheduler(plan_of(pipeline), tasks, teachers, store, executor=executor,
                                          warehouse=warehouse, progress=progress, keeper=keeper)
                    try:
                        result = await scheduler.run()
                    finally:
                        progress.stop()
            finally:
                await _nothing_left(store.run_id, pipeline.sandbox.backend, progress)
            build = None
            if result.stopped != "interrupted":
                build = build_run(pipeline, store, result.attempts, tasks, warehouse, hooks=rendering.result())
        finally:
            warehouse.close()
    behind = f"{warehouse.behind} attempt(s) not in it yet, as {warehouse.why_behind}" if warehouse.behind else None
    return RunOutcome(store, result, build, skipped, behind)


async def _nothing_left(run_id: str, backend: str, progress: Progress) -> None:
    """The run's containers are gone once its executor has closed; any still there is removed and told."""
    try:
        left = await sandbox_backend(backend).remove_left(run_id)
    except SandboxError as exc:  # the engine is gone too: the run's own end (or error) is what to tell
        log.warning("could not look for containers left by run %s: %s", run_id, exc)
        return
    if left:
        log.warning("removed %d container(s) of run %s left on the engine after it ended", left, run_id)
        progress.note(f"removed {left} container(s) of this run left on the engine after it ended")


def open_warehouse(pipeline: Pipeline, store: RunStore, tasks: list[Task]) -> Warehouse:
    """The run's warehouse writer, with the run and its tasks recorded (again: rows are upserted)."""
    warehouse = Warehouse(pipeline.resolve(pipeline.warehouse.path) if pipeline.warehouse.path else store.warehouse_path)
    warehouse.start_run(store.run_id, pipeline.name, store.pipeline_text(), store.meta()["command"])
    warehouse.record_tasks(store.run_id, tasks)
    return warehouse


def build_run(
    pipeline: Pipeline,
    store: RunStore,
    attempts: list[Attempt],
    tasks: list[Task],
    warehouse: Warehouse | None,
    settings: BuildSettings | None = None,
    hooks: RenderHooks | None = None,
) -> BuildSummary:
    """Filters, rendering, dataset and card for a run's attempts (also `factory build`). With a
    warehouse, the filter decisions go into it and the card shows the run's plots drawn from it."""
    hooks = hooks or render_hooks(build_renderer(template=pipeline.output.template))
    meta = CardMeta(
        pretty_name=pipeline.output.pretty_name or pipeline.name,
        license=pipeline.output.license,
        source_datasets=[s for s in pipeline.tasks.sources if not Path(pipeline.resolve(s)).exists()],
        task_set=f"{pipeline.tasks.named()} ({len(tasks)} tasks used)",
        command=store.meta().get("command", ""),
        run_id=store.run_id,
        repo_id=pipeline.output.hub_repo_id,
        saved=_saved(store),
    )
    settings = (settings or BuildSettings(filters=pipeline.filters)).model_copy(
        update={"include_failures": pipeline.output.include_failures})
    if warehouse is not None:
        warehouse.record_build(store.run_id, settings.filters.model_dump(mode="json"), settings.build_command)
    summary = build_dataset(
        attempts, store.pipeline_text(), store.dataset_dir, settings,
        meta=meta, tasks={t.instance_id: t for t in tasks},
        count_tokens=hooks.count_tokens, tokenize=hooks.tokenize, render_info=hooks.info,
        plots=None if warehouse is None else _plots_from(warehouse, store.run_id),
    )
    write_atomic(store.folder / "build.json", json.dumps({
        "funnel": summary.chain.funnel(), "rows": summary.rows, "out_dir": str(summary.out_dir),
        "drops": dict(Counter(f"{d.filter}: {d.reason}" for d in summary.drops)),
    }, indent=1))
    return summary


def _saved(store: RunStore) -> dict[str, int]:
    """The attempts the scheduler never made, by why (`allocation.json`, written as a run ends)."""
    try:
        return json.loads((store.folder / "allocation.json").read_text()).get("saved", {})
    except (OSError, ValueError):  # a run from before allocation.json, or one cut short
        return {}


def _plots_from(warehouse: Warehouse, run_id: str) -> DrawPlots:
    """Record the build's filter decisions and its kept rows' exact token counts (beside the
    estimates), then draw the run's plots from the warehouse with them, so the card's row-length
    plots are this build's. A warehouse that cannot be written now (a reader holds it, a full disk)
    leaves the card without plots; the records wait in the writer, as everything else it buffers."""

    def draw(chain: ChainResult, written: WrittenDataset, folder: Path) -> list[Plot]:
        warehouse.record_drops(run_id, [d.to_row() for d in chain.drops])
        warehouse.record_token_counts(run_id, written.rows)
        try:
            return draw_plots(warehouse.query, run_id, folder)
        except (WarehouseBusy, StorageError) as exc:
            log.warning("the dataset card has no plots: the warehouse could not be read after its write (%s)", exc)
            return []

    return draw


def pipeline_of(store: RunStore) -> Pipeline:
    """The pipeline a run was started with (its saved text; paths resolve against the original file)."""
    return parse_pipeline(store.pipeline_text(), store.meta()["pipeline"])
