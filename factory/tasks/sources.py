"""Task sources: a task-set folder (or a folder of Harbor / Terminal-Bench tasks), a JSONL or Parquet file, or a Hugging Face dataset name.

`load_tasks` reads rows, maps them onto `Task` (rows.py), applies the selection of the
pipeline, and reports every row it skips with its id and the field at fault. `tasks.source` may
list several sources (a mixed-language run): each is read with the same selection, in order.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory.errors import UsageError
from factory.records import Task
from factory.tasks import harbor
from factory.tasks.config import TasksConfig, local_path
from factory.tasks.fields import BadRow, Unsupported
from factory.tasks.formats import task_from_row
from factory.tasks.validate import invalid_ids, measured, read_results

TASKS_FILE = "tasks.jsonl"


@dataclass
class LoadReport:
    tasks: list[Task] = field(default_factory=list)
    skipped: list[BadRow] = field(default_factory=list)
    """Every row left out, with its id and field; `Unsupported` ones are well formed but in a
    language or log format factory cannot read yet."""

    def unsupported(self) -> dict[str, int]:
        """Rows left out for want of a reader, counted by language."""
        return dict(Counter(bad.language for bad in self.skipped if isinstance(bad, Unsupported)))

    def summary(self) -> str:
        """One line: what loaded, and what was left out and why, by kind."""
        line = f"{len(self.tasks)} task(s) loaded"
        unsupported = self.unsupported()
        malformed = len(self.skipped) - sum(unsupported.values())
        if malformed:
            line += f", {malformed} malformed row(s) skipped"
        if unsupported:
            each = ", ".join(f"{lang} {n}" for lang, n in sorted(unsupported.items()))
            line += f", {sum(unsupported.values())} row(s) skipped with no reader for their tests ({each})"
        return line


def _jsonl_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    with path.open() as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{path}:{number}: not valid JSON ({exc.msg}); fix or remove the line") from None
            if not isinstance(row, dict):
                raise UsageError(f"{path}:{number}: each line must be a JSON object")
            yield f"{path}:{number}", row


def _parquet_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    import pyarrow.parquet as pq

    for number, row in enumerate(pq.read_table(path).to_pylist(), 1):
        yield f"{path}:row {number}", row


def _hub_rows(name: str, split: str, streaming: bool) -> Iterator[tuple[str, dict[str, Any]]]:
    import datasets

    try:
        dataset = datasets.load_dataset(name, split=split, streaming=streaming)
    except Exception as exc:  # datasets raises many kinds; all mean "cannot load this source"
        raise UsageError(
            f"cannot load task source {name!r} (not a folder, .jsonl or .parquet file here, "
            f"and the Hugging Face dataset failed: {exc})"
        ) from exc
    for number, row in enumerate(dataset, 1):
        yield f"{name}[{split}] row {number}", dict(row)


def rows(source: str, *, base: Path | None = None, split: str = "train", streaming: bool = False):
    """(where, row) pairs from any source the loaders accept."""
    path = local_path(source, base)
    if path is None:
        return _hub_rows(source, split, streaming)
    if path.is_dir():
        tasks_file = path / TASKS_FILE
        if not tasks_file.exists() and harbor.is_taskset(path):
            return harbor.rows(path)
        if not tasks_file.exists():
            raise UsageError(f"{path} is a folder without {TASKS_FILE} or Harbor tasks (task.toml); a task set folder needs one")
        return _jsonl_rows(tasks_file)
    if not path.exists():
        raise UsageError(f"task file {path} does not exist")
    return _parquet_rows(path) if path.suffix == ".parquet" else _jsonl_rows(path)


def load_tasks(config: TasksConfig, *, base: Path | None = None) -> LoadReport:
    """Tasks of the sources after selection; bad rows are skipped and reported (or fatal if strict)."""
    report = LoadReport()
    seen: set[str] = set()
    for source in config.sources:
        _load_source(config, source, base, report, seen)
    if config.shuffle_seed is not None:
        random.Random(config.shuffle_seed).shuffle(report.tasks)
    if config.limit:
        report.tasks = report.tasks[: config.limit]
    return report


def tasks_by_source(config: TasksConfig, tasks: list[Task]) -> list[tuple[str, list[Task]]]:
    """Each of the config's sources with its tasks (a task's `source` is `<format>:<source>`,
    rows.py), for what is done per source: building a local task set's images."""
    return [(s, [t for t in tasks if t.source.partition(":")[2] == s]) for s in config.sources]


def _load_source(config: TasksConfig, source: str, base: Path | None, report: LoadReport, seen: set[str]) -> None:
    mine: list[Task] = []
    one_limit = config.limit_per_source or (config.limit if len(config.sources) == 1 else None)
    invalid = invalid_ids(source, base) if config.skip_invalid else {}
    results = read_results(source, base)
    for where, row in rows(source, base=base, split=config.split, streaming=config.streaming):
        if not _selected(row, config):
            continue
        try:
            task = task_from_row(row, config.format, source=source, test_cmd=config.test_cmd)
            if task.instance_id in seen:
                raise BadRow(task.instance_id, "instance_id", "duplicate id")
            if task.instance_id in invalid:
                raise BadRow(task.instance_id, "validation", invalid[task.instance_id])
            task = measured(task, results)
        except BadRow as bad:
            if config.strict and not isinstance(bad, Unsupported):  # well formed: counted, never fatal
                raise UsageError(f"{where}: {bad}") from None
            report.skipped.append(bad)
            continue
        seen.add(task.instance_id)
        mine.append(task)
        if one_limit and config.shuffle_seed is None and len(mine) >= one_limit:
            break  # a streamed Hub source is read no further than needed
    if config.limit_per_source:
        if config.shuffle_seed is not None:
            random.Random(f"{config.shuffle_seed}:{source}").shuffle(mine)
        mine = mine[: config.limit_per_source]
    report.tasks += mine


def _selected(row: dict[str, Any], config: TasksConfig) -> bool:
    iid, repo = row.get("instance_id"), row.get("repo")
    if config.include_ids and iid not in config.include_ids:
        return False
    if iid in config.exclude_ids:
        return False
    if config.include_repos and repo not in config.include_repos:
        return False
    return repo not in config.exclude_repos


def load_taskset(source: str, **selection: Any) -> LoadReport:
    """Convenience for the command line: any source, default selection."""
    return load_tasks(TasksConfig(source=source, **selection))
