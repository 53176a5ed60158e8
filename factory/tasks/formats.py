"""Task formats: the row schemas factory reads, each a function from a row to a `Task`,
registered once here. `auto` picks a row's format from the fields only that format has.

    name              rows of                                          module
    swesmith          SWE-smith, every language; local task sets      rows.py, swesmith_langs.py
    swebench          SWE-bench / SWE-Gym (Python, test_patch)        rows.py
    swebench-v5       SWE-bench v5, SWE-bench Multilingual            swebench_v5.py
    swe-rebench-v2    SWE-rebench V2                                   rebench.py
    multi-swe-bench   Multi-SWE-bench                                  multiswebench.py
    harbor            Harbor / Terminal-Bench task folders             harbor.py
    imported          tasks `factory import` read from trajectories    imported.py

A new format is a module with `task(row, source, test_cmd) -> Task` and one `FORMATS.add` below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from factory.errors import UsageError
from factory.records import Task
from factory.registry import Registry
from factory.tasks import harbor, imported, multiswebench, rebench, swebench_v5
from factory.tasks.rows import swebench_task, swesmith_task

AUTO = "auto"


@dataclass(frozen=True)
class RowFormat:
    name: str
    task: Callable[..., Task]
    """`task(row, source, test_cmd)`: the row as a Task, or BadRow / Unsupported."""
    claims: Callable[[dict[str, Any]], bool]
    """Whether `auto` reads a row as this format (asked in FORMATS' order)."""
    summary: str


FORMATS: Registry[RowFormat] = Registry("task format")
"""Asked in this order by `auto`: the most particular schemas first, SWE-smith's last."""
for _spec in (
    RowFormat("harbor", harbor.task, lambda r: harbor.ROW_KEY in r,
              "Harbor / Terminal-Bench: a folder per task (task.toml or task.yaml, instruction, tests, solution)"),
    RowFormat("multi-swe-bench", multiswebench.task, lambda r: "fix_patch" in r and "org" in r and "number" in r,
              "Multi-SWE-bench: org, repo, number, base, fix_patch, test_patch, f2p/p2p/s2p/n2p_tests"),
    RowFormat("swe-rebench-v2", rebench.task, lambda r: "install_config" in r,
              "SWE-rebench V2: image_name, install_config{test_cmd, log_parser}, patch, test_patch"),
    RowFormat("swebench-v5", swebench_v5.task, lambda r: "eval_script" in r and "log_parser" in r,
              "SWE-bench v5 / Multilingual: image, eval_script, log_parser, eval_type, patch, test_patch"),
    RowFormat("swebench", swebench_task, lambda r: bool(r.get("test_patch")),
              "SWE-bench / SWE-Gym: base_commit, patch (the fix), test_patch (hidden tests); pytest"),
    RowFormat("swesmith", swesmith_task, lambda r: True,
              "SWE-smith, any language: image_name, patch (introduces the bug), FAIL_TO_PASS"),
    RowFormat(imported.NAME, imported.task, lambda r: False,
              "factory import without --tasks: tasks as trajectory files name them (no image, no tests)"),
):
    FORMATS.add(_spec.name, _spec)


def names() -> list[str]:
    return [AUTO, *FORMATS]


def row_format(name: str) -> RowFormat | None:
    """The format called `name`; None for `auto` (each row's own); unknown names list the valid."""
    if name == AUTO:
        return None
    if name not in FORMATS:  # `auto` is a choice too, though no format of its own
        raise UsageError(unknown(name))
    return FORMATS.get(name)


def unknown(name: str) -> str:
    return f"unknown task format {name!r}; valid: {', '.join(names())}"


def detect(row: dict[str, Any]) -> RowFormat:
    return next(spec for spec in FORMATS.values() if spec.claims(row))


def task_from_row(row: dict[str, Any], fmt: str = AUTO, source: str = "", test_cmd: str | None = None) -> Task:
    spec = row_format(fmt) or detect(row)
    return spec.task(row, source=source, test_cmd=test_cmd)
