"""Tasks that `factory import` made from trajectory files when it was given no task source
(`--trust-source` without `--tasks`): each is a `Task` record as the run folder's `tasks.jsonl`
holds it, with the instance id and problem statement the file gave and no image or tests, so
nothing can verify against it. A run made so reads them back (`factory build`) through this
format, which `auto` never picks."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from factory.records import Task
from factory.tasks.fields import BadRow

NAME = "imported"


def task(row: dict[str, Any], source: str, test_cmd: str | None = None) -> Task:
    try:
        return Task.model_validate({**row, "source": f"{NAME}:{source}"})
    except ValidationError as exc:
        error = exc.errors()[0]
        raise BadRow(str(row.get("instance_id", "?")), ".".join(map(str, error["loc"])), error["msg"]) from None
