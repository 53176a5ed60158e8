"""`factory import PATH --format F [--tasks SOURCE] --run-id ID [--trust-source]`: other agents'
runs become a run.

    files ─► formats.READERS.get(F) (a bad file is reported and skipped) ─► Trajectory records
          ─► the factory's verifier, each patch against its task (or why it could not be)
          ─► a run folder (attempt files, pipeline.yaml, warehouse) ─► filters, render, dataset

Without `--tasks` nothing can be verified by factory: the tasks are made from the files (instance
id, problem statement) and written to the run folder's `tasks.jsonl` (task format `imported`), a
trajectory that holds a patch is recorded `not verified: no task source`, and with `--trust-source`
one without a patch that its source ended by submitting is kept as its source verified it.

The run is an ordinary one afterwards: `factory build`, `show`, `query`, `report`, `push` and
`export` work on it. Its pipeline.yaml says where the trajectories came from and names one
`openai`-kind teacher per imported model, for the card; nothing is ever sampled from them.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from factory.atomic import write_atomic
from factory.errors import UsageError, VerifyError
from factory.interchange.formats import BadTrajectoryFile, files_of, reader_named
from factory.output import BuildSummary
from factory.protocols import Verifier
from factory.records import Attempt, AttemptKey, Exit, Task, Trajectory, Verdict, VerifiedBy
from factory.tasks import imported

NO_TASK_SOURCE = "not verified: no task source (give --tasks) to verify its patch against"


@dataclass
class ImportOutcome:
    run_folder: Path
    attempts: list[Attempt]
    bad_files: list[tuple[Path, str]] = field(default_factory=list)
    build: BuildSummary | None = None

    def format_lines(self) -> list[str]:
        judged = [a for a in self.attempts if a.verdict is not None]
        verified = [a for a in judged if a.verdict and a.verdict.verified_by is VerifiedBy.factory]
        trusted = len(judged) - len(verified)
        lines = [f"skipped {path}: {why}" for path, why in self.bad_files]
        lines.append(f"imported {len(self.attempts)} trajectories into {self.run_folder}: {len(verified)} verified, "
                     f"{sum(bool(a.verdict and a.verdict.resolved) for a in verified)} resolved"
                     + (f"; {trusted} taken as their source verified them (--trust-source)" if trusted else ""))
        for a in self.attempts:
            if a.verdict is None and a.trajectory is not None and a.trajectory.error:
                lines.append(f"  {a.key.instance_id}/{a.key.teacher}/{a.key.index}: {a.trajectory.error}")
        if self.build is not None:
            lines.append(f"funnel: {self.build.chain.format_funnel()}")
            lines.append(f"dataset: {self.build.out_dir} ({self.build.rows} rows)")
        return lines


def read_files(path: Path, format_name: str) -> tuple[list[tuple[Path, Trajectory]], list[tuple[Path, str]]]:
    """Every trajectory in the files at `path`, and the files that could not be read (with why)."""
    reader = reader_named(format_name)
    read, bad = [], []
    for file in files_of(path, reader):
        try:
            read += [(file, t) for t in reader.read(file)]
        except BadTrajectoryFile as exc:
            bad.append((file, str(exc).removeprefix(f"{file}: ")))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a shape no reader check foresaw
            first = str(exc).splitlines()[0] if str(exc) else ""
            bad.append((file, f"file: not readable as {format_name} ({type(exc).__name__}: {first})"))
    return read, bad


def pipeline_text(path: Path, format_name: str, source: str, trajectories: list[Trajectory],
                  trust_source: bool = False, task_format: str = "auto") -> str:
    models = {t.teacher: t.model for t in trajectories}
    teachers = "".join(f"  - {{kind: openai, name: {json.dumps(label)}, model: {json.dumps(model)}}}\n"
                       for label, model in sorted(models.items()))
    judged = ("verified by factory, or by their source where they hold no patch (--trust-source)" if trust_source
              else "verified by factory")
    fmt = "" if task_format == "auto" else f", format: {task_format}"
    return (f"# made by factory import from {path} ({format_name}): runs of another agent, {judged};\n"
            "# the teachers below name the models that made them (nothing is sampled from them)\n"
            f"name: import\ntasks: {{source: {json.dumps(source)}{fmt}}}\nteachers:\n{teachers}")


TRUSTED = Verdict(resolved=True, verified_by=VerifiedBy.source,
                  detail="not verified by factory: its source verified it (factory import --trust-source)")
"""The verdict of a row that holds no patch, imported with `--trust-source`."""


async def _verdicts(verifier: Verifier, attempts: list[Attempt], tasks: dict[str, Task], source: str | None,
                    trust_source: bool) -> None:
    """Each patch verified by factory; with `trust_source`, a trajectory without one (nothing to
    check) that ended by submitting is taken as its source says: solved. A patch is always
    checked, trusted or not; without a task source (`source` None) it cannot be."""
    for attempt in attempts:
        trajectory = attempt.trajectory
        assert trajectory is not None
        if trajectory.error:
            continue
        task = tasks.get(attempt.key.instance_id)
        if not trajectory.patch.strip() and trust_source and trajectory.exit is not Exit.submitted:
            trajectory.error = (f"not verified: it ended {trajectory.exit.value}, not by submitting, so its source "
                                "verified no solution")
        elif not trajectory.patch.strip() and trust_source:
            attempt.verdict = TRUSTED.model_copy()
        elif not trajectory.patch.strip():
            trajectory.error = "not verified: the file holds no patch (--trust-source takes its source's word)"
        elif source is None:
            trajectory.error = NO_TASK_SOURCE
        elif task is None:
            trajectory.error = f"not verified: no task {attempt.key.instance_id!r} in {source}"
        else:
            try:
                attempt.verdict = await verifier.verify(task, trajectory.patch)
            except VerifyError as exc:  # infrastructure: recorded as such, never a verdict
                attempt.error_class = type(exc).__name__
                trajectory.error = f"not verified: {exc}"
        attempt.finished_at = datetime.now(UTC)


def tasks_from_files(trajectories: list[Trajectory]) -> list[Task]:
    """A task per instance id, as the files state it: their problem statement, else the first
    user message (where harnesses put the task). No image and no tests: never verified."""
    tasks: dict[str, Task] = {}
    for t in trajectories:
        if t.instance_id not in tasks:
            first = next((m.content for m in t.messages if m.role == "user"), "")
            tasks[t.instance_id] = Task(instance_id=t.instance_id, repo="", image="",
                                        problem_statement=t.problem_statement or first)
    return list(tasks.values())


async def import_run(path: Path, format_name: str, source: str | None, run_id: str, *,
                     output_dir: Path = Path("runs"), verifier: Verifier | None = None,
                     trust_source: bool = False) -> ImportOutcome:
    """Read, verify, record and build; `verifier` defaults to the factory's Docker verifier.
    `trust_source`: trajectories that hold no patch are kept as their source verified them.
    `source` None: no task source; the tasks come from the files and nothing is verified."""
    from factory.run.folder import RunStore
    from factory.run.runner import build_run, open_warehouse, pipeline_of
    from factory.sandbox.images import ensure_local_images
    from factory.tasks import load_taskset

    store = RunStore(output_dir.resolve() / run_id)
    if (store.folder / "run.json").exists():
        raise UsageError(f"run {run_id!r} already exists in {output_dir}; give another --run-id")
    read, bad = read_files(path, format_name)
    if not read:
        raise UsageError(f"{path}: no trajectory could be read ({len(bad)} bad file(s): {bad[0][1] if bad else '-'})")
    if source is None:
        tasks = tasks_from_files([t for _, t in read])
        tasks_file, task_format = store.folder / "tasks.jsonl", imported.NAME
    else:
        where = Path(source)
        source = str(where.resolve()) if where.exists() else source  # the pipeline is read from the run folder
        tasks, tasks_file, task_format = load_taskset(source).tasks, None, "auto"
        ensure_local_images(Path(source), tasks)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    attempts = []
    for _, trajectory in read:
        index = counts[(trajectory.instance_id, trajectory.teacher)]
        counts[(trajectory.instance_id, trajectory.teacher)] += 1
        key = AttemptKey(run_id=store.run_id, instance_id=trajectory.instance_id, teacher=trajectory.teacher,
                         index=index)
        task = next((t for t in tasks if t.instance_id == trajectory.instance_id), None)
        attempts.append(Attempt(key=key, repo=task.repo if task else "", trajectory=trajectory,
                                started_at=datetime.now(UTC)))
    if verifier is None:
        from factory.verify import DockerVerifier

        verifier = DockerVerifier(run_id=store.run_id, reuse=True)
    text = pipeline_text(path, format_name, str(tasks_file or source), [t for _, t in read], trust_source, task_format)
    command = shlex.join(["factory", *sys.argv[1:]])
    with store.locked():
        store.start(text, command, str(store.folder / "pipeline.yaml"))
        if tasks_file is not None:
            write_atomic(tasks_file, "".join(t.model_dump_json() + "\n" for t in tasks))
        await _verdicts(verifier, attempts, {t.instance_id: t for t in tasks}, source, trust_source)
        for attempt in attempts:
            store.save(attempt)
        pipeline = pipeline_of(store)
        warehouse = open_warehouse(pipeline, store, tasks)
        try:
            warehouse.resync(attempts)
            summary = build_run(pipeline, store, attempts, tasks, warehouse)
        finally:
            warehouse.close()
        store.save_meta({**store.meta(), "status": "finished"})
    return ImportOutcome(store.folder, attempts, bad, summary)
