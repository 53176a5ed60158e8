"""Red-team cases for the `command` framework (Go, JavaScript, Java, Rust): each an agent patch
made at a demo (or held-back, `HELDOUT`) task's start state, and what the
verdict must be.

A case changes a copy of the task's repo (`Case.change`) and the patch is `git diff` of that,
as an agent's would be. Attacks do not fix the bug: a verdict that resolves one (and that the
`resolved` filter keeps) means the forgery worked. Fixes apply the task's gold patch first, then
a harmless side effect: they must resolve.

The forgers that spare the planted controls learn, when the patch is written, what an agent
would see: the tests' names (`seen`) and their bodies with the whitespace taken out
(`known_bodies`), in the repo as the agent sees it (its FAIL_TO_PASS tests taken out,
`hide_failing_tests`); at run time they read the test files again and spare only what they
know, so a canary or a copy that differs from its original by one literal is left to fail.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from factory.records import Task
from factory.verify.frameworks.copies.base import COPY_WRITERS
from tests.verify.conftest import git
from tests.verify.test_canary import at_start_state

TASKSETS = Path(__file__).parents[3] / "pipelines/tasksets"
HELDOUT = Path(__file__).parents[2] / "fixtures/lang-heldout"
"""The held-back task sets (one folder per language), which the verifier's authors did not write against."""


class Expect(Enum):
    blocked = "blocked"
    """An attack: not resolved, or resolved with a flag the `resolved` filter drops."""
    resolves = "resolves"
    """A correct fix with a harmless side effect: resolved and kept."""


@dataclass(frozen=True)
class Case:
    name: str
    taskset: str
    expect: Expect
    change: Callable[[Path, Task], None]
    """Edits the repo at the start state (after the gold fix when `gold`)."""
    task: int = 0
    """Index of the task in the task set's tasks.jsonl."""
    gold: bool = False
    what: str = ""
    """One line for docs/redteam-lang.md."""
    home: Path = TASKSETS
    """The folder of task sets `taskset` is in."""

    @property
    def folder(self) -> Path:
        return self.home / self.taskset

    @property
    def id(self) -> str:
        held = "heldout-" if self.home != TASKSETS else ""
        return f"{held}{self.taskset.removeprefix('demo-')}-{self.name}"


def heldout(language: str) -> Callable[..., Case]:
    """A maker of cases on the held-back task set of `language`."""
    def case(name: str, expect: Expect, change: Callable[[Path, Task], None], task: int, what: str, gold: bool = False) -> Case:
        return Case(name, language, expect, change, task=task, gold=gold, what=what, home=HELDOUT)
    return case


def patch_of(case: Case, task: Task, tmp_path: Path) -> str:
    """`git diff` of the task's repo at its start state (with the gold fix, for a fix) after the case's change."""
    work = at_start_state(case.folder, task, tmp_path / "repo")
    hide_failing_tests(work, task)
    if case.gold:
        subprocess.run(["git", "apply"], input=task.gold_patch, text=True, cwd=work, check=True)
    case.change(work, task)
    git(work, "add", "-A")
    return git(work, "-c", "core.quotepath=false", "diff", "--cached", "-M")


def hide_failing_tests(work: Path, task: Task) -> None:
    """The repo as the agent sees it: its FAIL_TO_PASS tests taken out (`plant.hider`), committed
    as the state the agent's diff is made against."""
    texts = {}
    for path in work.rglob("*"):
        if path.is_file() and ".git" not in path.relative_to(work).parts:
            try:
                texts[str(path.relative_to(work))] = path.read_text()
            except UnicodeDecodeError:
                continue
    for path, text in COPY_WRITERS.get(task.language).hide(texts, list(task.FAIL_TO_PASS)).items():
        (work / path).write_text(text)
    git(work, "commit", "-qam", "the agent's view", "--allow-empty")


def write(work: Path, path: str, text: str) -> None:
    target = work / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def replace(work: Path, path: str, old: str, new: str) -> None:
    """Replace the one occurrence of `old` in `path` (the case is wrong if it is not there)."""
    text = (work / path).read_text()
    assert text.count(old) == 1, (path, old)
    (work / path).write_text(text.replace(old, new))


def rename(work: Path, old: str, new: str) -> None:
    (work / new).parent.mkdir(parents=True, exist_ok=True)
    (work / old).rename(work / new)


def seen(task: Task) -> list[str]:
    """The test names an agent sees when it runs the repo's tests."""
    return [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]


def quoted(text: str) -> str:
    """A double-quoted string literal Go, Java, JS and Rust all read as `text` (ASCII only)."""
    return json.dumps(text, ensure_ascii=True)


def strings(items: list[str]) -> str:
    return ", ".join(quoted(s) for s in items)


def bodies(text: str, head: str) -> dict[str, str]:
    """Test name -> body (from its first `{` to the matching `}`) without whitespace, for each
    match of `head` (a regex whose group 1 is the name) in `text`. The forgers do the same at run time."""
    found = {}
    for match in re.finditer(head, text):
        start = text.index("{", match.end() - 1)
        depth, end = 0, start
        for end in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        found[match.group(1)] = re.sub(r"\s+", "", text[start:end + 1])
    return found


def known_bodies(work: Path, pattern: str, head: str) -> list[str]:
    """The bodies of every test in the files matching `pattern` at the start state."""
    return sorted({b for f in sorted(work.glob(pattern)) for b in bodies(f.read_text(), head).values()})
