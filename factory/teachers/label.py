"""A teacher's label: its `name`, else its `model`, wherever a teacher is named (trajectories, the
warehouse, the dataset, the journal, the budget, the command line)."""

from __future__ import annotations

from typing import Any


def teacher_label(teacher: Any) -> str:
    """The label of a teacher config (any kind) or a built teacher."""
    return teacher.name or teacher.model
