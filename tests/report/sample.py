"""A finished run made without Docker: the output tests' sample attempts (three teachers, every
kind of outcome), saved in a real run folder, recorded by the real warehouse writer and built by
`build_run` (the real filters, renderer, dataset and card, and so the card's plots)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from factory.config import load_pipeline
from factory.records import Attempt
from factory.run.folder import RunStore
from factory.run.runner import build_run, open_warehouse
from tests.output.sample_run import RUN_ID, TASKS, demo_attempts

T0 = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)

PIPELINE = """\
name: report-sample
tasks:
  source: tasks.jsonl
teachers:
  - kind: scripted
    model: scripted-realistic
    name: scripted
output:
  dir: runs
  template: qwen3
"""


def timed(attempts: list[Attempt]) -> list[Attempt]:
    """The attempts finishing one after another, a minute and a half apart."""
    return [a.model_copy(update={"started_at": T0 + timedelta(seconds=30 * i),
                                 "finished_at": T0 + timedelta(seconds=90 * (i + 1))})
            for i, a in enumerate(attempts)]


def finished_run(folder: Path, attempts: list[Attempt] | None = None) -> RunStore:
    """The run `RUN_ID` under `folder/runs`, built; its dataset card shows the plots."""
    pipeline_file = folder / "pipeline.yaml"
    pipeline_file.write_text(PIPELINE)
    (folder / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in TASKS.values()))
    pipeline = load_pipeline(pipeline_file)
    store = RunStore(folder / "runs" / RUN_ID)
    store.start(PIPELINE, "factory run pipeline.yaml", str(pipeline_file))
    attempts = timed(demo_attempts(scripted=True)) if attempts is None else attempts
    for attempt in attempts:
        store.save(attempt)
    tasks = list(TASKS.values())
    warehouse = open_warehouse(pipeline, store, tasks)
    try:
        warehouse.resync(attempts)
        build_run(pipeline, store, attempts, tasks, warehouse)
    finally:
        warehouse.close()
    return store
