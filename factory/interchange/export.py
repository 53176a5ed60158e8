"""`factory export RUN --format openai|sharegpt --out FILE`: a run's kept rows in another format.

    read_kept(dataset/) ─► to_line (per format) ─► check_line (the format's rules) ─► FILE, one JSON a line

A row that does not fit the format is left out with its reason, never written half right. When
every row is left out nothing is written and `NothingExported` says why on one line (exit 1).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory.errors import NothingExported, UsageError
from factory.interchange import openai_chat, rollouts, sharegpt
from factory.interchange.kept import KeptRow, read_kept
from factory.registry import Registry


@dataclass(frozen=True)
class Format:
    name: str
    to_line: Callable[[KeptRow], dict[str, Any]] | None
    check_line: Callable[[Any], list[str]] | None
    what: str
    from_run: Callable[[Path, Path], Any] | None = None
    """A format made from every attempt of the run (its folder, the file to write), not from the
    kept rows; returns a summary with `format_lines()`."""


FORMATS: Registry[Format] = Registry("export format")
"""`factory export --format`: a new format is its module (`to_line`, `check_line`) and one `add`."""
FORMATS.add("openai", Format("openai", openai_chat.to_line, openai_chat.check_line, "OpenAI chat fine-tuning JSONL"))
FORMATS.add("sharegpt", Format("sharegpt", sharegpt.to_line, sharegpt.check_line, "ShareGPT JSON lines (LLaMA-Factory)"))
FORMATS.add("rollouts", Format("rollouts", None, None, "RL rollout records", from_run=rollouts.export_run))


@dataclass
class ExportSummary:
    out: Path
    format: Format
    written: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(row, why) for every row left out."""

    def format_lines(self) -> list[str]:
        lines = [f"{self.written} row(s) written to {self.out} ({self.format.what})"]
        lines += [f"skipped {row}: {why}" for row, why in self.skipped]
        return lines


def format_named(name: str) -> Format:
    """`FORMATS.get`: an unknown name lists the valid ones."""
    return FORMATS.get(name)


def export_rows(rows: list[KeptRow], fmt: Format, out: Path) -> ExportSummary:
    if fmt.to_line is None or fmt.check_line is None:
        raise UsageError(f"{fmt.name} is made from a whole run's attempts, not from rows: factory export RUN "
                         f"--format {fmt.name}")
    summary = ExportSummary(out, fmt)
    lines = []
    for row in rows:
        try:
            line = fmt.to_line(row)
        except ValueError as exc:
            summary.skipped.append((row.label, str(exc)))
            continue
        problems = fmt.check_line(line)
        if problems:
            summary.skipped.append((row.label, "; ".join(problems[:3])))
            continue
        lines.append(json.dumps(line, ensure_ascii=False) + "\n")
    if summary.skipped and not lines:
        (row, why), more = summary.skipped[0], len(summary.skipped) - 1
        raise NothingExported(f"none of the {len(rows)} kept row(s) fit {fmt.what}, nothing written to {out}: "
                              f"{row}: {why}" + (f" (and {more} more row(s) refused)" if more else ""))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(lines), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write ({exc.strerror}); choose another file") from exc
    summary.written = len(lines)
    return summary


def export_dataset(dataset_dir: Path, format_name: str, out: Path) -> ExportSummary:
    """The kept rows of the dataset in `dataset_dir` written to `out` in the named format (a
    whole-run format reads the run folder that holds `dataset_dir`)."""
    fmt = format_named(format_name)
    if fmt.from_run is not None:
        return fmt.from_run(dataset_dir.parent, out)
    return export_rows(read_kept(dataset_dir), fmt, out)
