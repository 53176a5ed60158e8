"""No API dollar paid twice: teacher turns are journaled while an attempt runs.

An attempt killed mid-way (kill -9, power loss) is redone on resume. Its journal holds the
completions already paid for; the redo replays them in order, so the agent loop re-runs the
same tool calls in a fresh sandbox, and only turns past the journal reach the API again.
Paid teachers only: the offline scripted teacher costs nothing and keeps its own state.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from factory.protocols import Teacher
from factory.records import Completion, Message, Task


class JournalTeacher:
    def __init__(self, inner: Teacher, path: Path):
        self.inner = inner
        self.path = path
        self.name, self.model = inner.name, inner.model
        self.scripted = getattr(inner, "scripted", False)
        scrub = getattr(inner, "scrub", None)
        if scrub is not None:
            self.scrub = scrub
        lines = path.read_text().splitlines() if path.exists() else []
        self.pending = [Completion.model_validate_json(line) for line in lines if line.strip()]
        self.replayed = 0

    def session(self, task: Task, seed: int) -> JournalTeacher:
        start = getattr(self.inner, "session", None)
        return self if start is None else JournalTeacher(start(task, seed), self.path)

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion:
        if self.pending:
            self.replayed += 1
            return self.pending.pop(0)
        completion = await self.inner.complete(messages, tools)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as fh:
            fh.write(completion.model_dump_json() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        return completion
