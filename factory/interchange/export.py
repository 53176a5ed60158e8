"""`factory export RUN --format openai|sharegpt|dpo --out FILE`: a run's rows in another format.

    read_kept(dataset/) | read_graded(attempts, --filter) ─► shape_rows(--rows, --thinking)
        ─► lines (per format) ─► check_line (the format's rules) ─► FILE, one JSON a line
                                                                 ─► what a trainer needs, beside FILE

A row that does not fit the format is left out with its reason, never written half right. When
every row is left out nothing is written and `NothingExported` says why on one line (exit 1).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory.errors import NothingExported, UsageError
from factory.filters import SecretsConfig
from factory.interchange import atif, dpo, openai_chat, rollouts, sharegpt, trainers
from factory.interchange.kept import KeptRow, Which, read_graded, read_kept
from factory.interchange.shape import ExportRow, RowShape, ThinkingPolicy, shape_rows
from factory.records import Attempt
from factory.registry import Registry

Lines = Callable[[list[ExportRow]], Iterator[tuple[str, "dict[str, Any] | str"]]]
"""(label, line) for each line a format makes of the rows, or (label, why) for a row it refused."""


def per_row(to_line: Callable[[ExportRow], dict[str, Any]]) -> Lines:
    def lines(rows: list[ExportRow]) -> Iterator[tuple[str, dict[str, Any] | str]]:
        for row in rows:
            try:
                yield row.label, to_line(row)
            except ValueError as exc:
                yield row.label, str(exc)
    return lines


@dataclass(frozen=True)
class Format:
    name: str
    lines: Lines | None
    check_line: Callable[[Any], list[str]] | None
    what: str
    pairs: bool = False
    """Lines pair a task's resolved and failed runs: whole attempts of every outcome go in."""
    from_run: Callable[[Path, Path], Any] | None = None
    """A format made from every attempt of the run (its folder, the file to write), not from
    rows; returns a summary with `format_lines()`."""


FORMATS: Registry[Format] = Registry("export format")
"""`factory export --format`: a new format is its module (`to_line` or `pairs`, `check_line`, or
`from_run` for a format made from the whole run) and one `add`."""
FORMATS.add("openai", Format("openai", per_row(openai_chat.to_line), openai_chat.check_line, "OpenAI chat fine-tuning JSONL"))
FORMATS.add("sharegpt", Format("sharegpt", per_row(sharegpt.to_line), sharegpt.check_line, "ShareGPT JSON lines (LLaMA-Factory)"))
FORMATS.add("atif", Format("atif", per_row(atif.to_line), atif.check_line, "ATIF trajectories (Harbor), one a line"))
FORMATS.add("rollouts", Format("rollouts", None, None, "RL rollout records", from_run=rollouts.export_run))
FORMATS.add("dpo", Format("dpo", dpo.pairs, dpo.check_line, "DPO preference pairs (TRL conversational)", pairs=True))


@dataclass(frozen=True)
class ExportOptions:
    rows: RowShape = RowShape.attempt
    which: Which | None = None
    """None: the dataset's kept rows, or every graded attempt for a format that pairs."""
    thinking: ThinkingPolicy = ThinkingPolicy.keep
    command: str = "factory export"
    """Named in the trainer files written beside the export."""


@dataclass
class ExportSummary:
    out: Path
    format: Format
    written: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(row, why) for every row left out."""
    beside: list[Path] = field(default_factory=list)
    """The trainer files written next to `out`."""

    def format_lines(self) -> list[str]:
        lines = [f"{self.written} row(s) written to {self.out} ({self.format.what})"]
        lines += [f"  for the trainer: {path}" for path in self.beside]
        lines += [f"skipped {row}: {why}" for row, why in self.skipped]
        return lines


def format_named(name: str) -> Format:
    """`FORMATS.get`: an unknown name lists the valid ones."""
    return FORMATS.get(name)


def export_rows(rows: list[KeptRow], fmt: Format, out: Path, options: ExportOptions | None = None) -> ExportSummary:
    options = options or ExportOptions()
    if fmt.pairs and options.rows is not RowShape.attempt:
        raise UsageError(f"--format {fmt.name} pairs whole attempts; leave out --rows {options.rows}")
    if fmt.lines is None or fmt.check_line is None:
        raise UsageError(f"{fmt.name} is made from a whole run's attempts, not from rows: factory export RUN "
                         f"--format {fmt.name}")
    summary = ExportSummary(out, fmt)
    shaped = shape_rows(rows, options.rows, options.thinking)
    lines = []
    for label, line in fmt.lines(shaped):
        if isinstance(line, str):
            summary.skipped.append((label, line))
            continue
        problems = fmt.check_line(line)
        if problems:
            summary.skipped.append((label, "; ".join(problems[:3])))
            continue
        lines.append(json.dumps(line, ensure_ascii=False) + "\n")
    if summary.skipped and not lines:
        (row, why), more = summary.skipped[0], len(summary.skipped) - 1
        raise NothingExported(f"none of the {len(rows)} row(s) fit {fmt.what}, nothing written to {out}: "
                              f"{row}: {why}" + (f" (and {more} more row(s) refused)" if more else ""))
    if not lines:
        raise NothingExported(f"no rows to export to {out}: the run has none that --filter {options.which or 'kept'} names")
    every_turn = all(row.trains_every_turn for row in shaped)
    files = {out: "".join(lines), **trainers.sidecars(out, fmt.name, every_turn, options.command)}
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        for path, text in files.items():
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write ({exc.strerror}); choose another file") from exc
    summary.written, summary.beside = len(lines), [p for p in files if p != out]
    return summary


def export_dataset(dataset_dir: Path, format_name: str, out: Path, options: ExportOptions | None = None,
                   attempts: Callable[[], list[Attempt]] | None = None,
                   secrets: SecretsConfig | None = None) -> ExportSummary:
    """The rows `options` name written to `out` in the named format: the dataset's kept rows from
    `dataset_dir`, or the run's graded `attempts` for `--filter resolved|failed|all`."""
    options = options or ExportOptions()
    fmt = format_named(format_name)
    if fmt.from_run is not None:  # every graded attempt, whole: rows, filters and thinking are not its
        if options.rows is not RowShape.attempt or options.which is not None or options.thinking is not ThinkingPolicy.keep:
            raise UsageError(f"--format {fmt.name} records every graded attempt whole: leave out --rows, --filter "
                             f"and --thinking")
        return fmt.from_run(dataset_dir.parent, out)
    which = options.which or (Which.all if fmt.pairs else Which.kept)
    if fmt.pairs and which is not Which.all:
        raise UsageError(f"--format {fmt.name} pairs resolved with failed runs of a task: leave out --filter {which}")
    if which is Which.kept:
        return export_rows(read_kept(dataset_dir), fmt, out, options)
    if attempts is None:
        raise UsageError(f"--filter {which} reads the run's attempts; export the run, not a dataset folder")
    return export_rows(read_graded(attempts(), which, secrets), fmt, out, options)
