"""A scripted agent's turns on a terminal task (Harbor): the same outcomes as on a SWE task
(factory/teachers/playbook.py), played with shell commands instead of a patch.

    explore (ls the work dir, read a file the instruction names) ─► per outcome:
      solve         the task's solution/solve.sh as its bash tool calls ─► look at the result ─► submit
      wrong_fix     a change that does not do the task (a note left in the work dir) ─► submit
      loop          one `ls` 10-14 times ─► half: solve; half: repeat until a limit
      format_error  a bash call with invalid JSON arguments ─► (if re-prompted) as solve
      give_up       a final message without a change
      wander        list and read without end, until a limit

The solution runs as one bash call: each of the agent's calls is a shell of its own, and a
solve.sh that `cd`s or sets `set -e` means it for every line after. The agent runs as the
sandbox's user, so a solution that needs root solves only where the pipeline's sandbox runs as root.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from itertools import count

from factory.records import Task
from factory.teachers.playbook import Call, Outcome, Plan, Step

_PATH = re.compile(r"(?<![\w/])(/[\w.-]+(?:/[\w.-]+)+)")
"""An absolute path the instruction names (`/app/settings.json`)."""


def solution_command(task: Task) -> str:
    """The task's solve.sh as one bash command: its lines without the shebang."""
    assert task.terminal is not None
    script = task.terminal.solution.get("solve.sh", "")
    return "\n".join(line for line in script.splitlines() if not line.startswith("#!")).strip()


class TerminalPlan(Plan):
    """`Plan`'s outcomes on a terminal task: no patch, the solution's commands instead."""

    def __init__(self, task: Task, outcome: Outcome, rng: random.Random, parallel: float, fix: str | None = None):
        self.task, self.outcome, self.rng, self.parallel = task, outcome, rng, parallel
        self.workdir = task.workdir.rstrip("/") or "/"
        solve = solution_command(task)
        self.fix: list[Call] = [("bash", {"command": solve, "timeout": 300})] if solve else []
        self.hunks, self.repro = [], None
        self.named = list(dict.fromkeys(_PATH.findall(task.problem_statement)))

    def explore(self) -> Iterator[Step]:
        ls = ("bash", {"command": self.rng.choice([f"ls -la {self.workdir}", f"find {self.workdir} -maxdepth 2 | sort"])})
        if self.named and self.chance(self.parallel):
            yield ("Let me look at the machine and the file the task names.", [ls, self.read(self.named[0])])
            return
        yield ("I'll start by looking at the working directory.", [ls])
        if self.named:
            yield ("Let me read what the task is about.", [self.read(self.named[0])])

    def read(self, path: str) -> Call:
        return ("bash", {"command": f"ls -la {path} 2>&1; head -c 2000 {path} 2>&1"})

    def check(self) -> Iterator[Step]:
        look = self.read(self.named[-1]) if self.named else ("bash", {"command": f"ls -la {self.workdir}"})
        yield ("Let me check the result.", [look])

    def repeat(self, times: int | None) -> Iterator[Step]:
        for _ in range(times) if times is not None else count():
            yield ("Let me look at the directory once more.", [("bash", {"command": f"ls -la {self.workdir}"})])

    def wander(self) -> Iterator[Step]:
        for i in count():
            path = self.named[i % len(self.named)] if self.named and i % 2 else self.workdir
            yield ("Let me look around some more.", [self.read(path)])

    def wrong(self) -> list[Call]:
        """A change that does not do the task: a plan written down instead of carried out."""
        note = f"{self.workdir}/NOTES.txt"
        return [("bash", {"command": f"printf 'checked the task; the fix still needs doing\\n' > {note}"})]
