"""How often a forger that never saw a FAIL_TO_PASS test's body tells every original from its
copies (issue 32, red team round 2): the writers' real plans on every demo task with copies,
read as the round-2 forgers read them at run time (`lang_attacks/twins.py`).

Copies are meant to leave a forger a guess: 1 in 4 per test with three twins. A rate above one
half means the twins give the original away; those tasks are marked strict xfail (the rate on
main at the red team's commit in the reason), so a writer that hides the original better makes
them pass and the mark must go. Pure: no Docker, seeded plans.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import factory.verify.frameworks.copies  # noqa: F401  (registers the writers)
from factory.tasks import load_taskset
from factory.verify.frameworks.copies.base import COPY_WRITERS
from tests.verify.lang_attacks import TASKSETS, bodies, twins
from tests.verify.lang_attacks.golang import TEST_HEAD as GO_HEAD
from tests.verify.lang_attacks.java import TEST_HEAD as JAVA_HEAD
from tests.verify.lang_attacks.javascript import IT_HEAD
from tests.verify.lang_attacks.rust import TEST_HEAD as RUST_HEAD

HEADS = {"go": GO_HEAD, "java": JAVA_HEAD, "javascript": IT_HEAD, "rust": RUST_HEAD}
PLANS = 40
GIVEN_AWAY = 0.5
GIVEN_AWAY_NOW = {("demo-go", 4), ("demo-java", 2), ("demo-java", 4)}
"""Tasks whose twins still give their originals away in more than half the plans, after twins
became values the file holds as often as the original, evenly spaced numbers, and no site written
twice (round 2 measured 13 of 16 such tasks before)."""
TASKS = [("demo-go", i) for i in (1, 2, 4)] + [("demo-js", i) for i in range(5)] + \
        [("demo-java", i) for i in range(5)] + [("demo-rust", i) for i in (0, 2, 4)]


def _param(taskset: str, index: int):
    marks = [pytest.mark.xfail(strict=True, reason="more than half the plans give the originals away")] \
        if (taskset, index) in GIVEN_AWAY_NOW else []
    return pytest.param(taskset, index, id=f"{taskset}-{index}", marks=marks)


def _units(text: str, head: str) -> dict[str, tuple[int, int, str]]:
    """Test name -> (start, end, body) as the forgers find them (a head, then balanced braces)."""
    found = {}
    for match in re.finditer(head, text):
        start = text.index("{", match.end() - 1)
        depth = 0
        for end in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        found[match.group(1)] = (match.start(), end + 1, text[start:end + 1])
    return found


def _start_state(taskset: str, task, tmp_path: Path) -> Path:
    (repo,) = (TASKSETS / taskset / "repos").iterdir()
    work = tmp_path / "repo"
    shutil.copytree(repo, work)
    subprocess.run(["git", "apply"], input=task.start.bug_patch, text=True, cwd=work, check=True)
    return work


@pytest.mark.parametrize(("taskset", "index"), [_param(*t) for t in TASKS])
def test_twins_leave_a_forger_guessing(taskset: str, index: int, tmp_path: Path):
    task = load_taskset(str(TASKSETS / taskset), skip_invalid=False).tasks[index]
    work = _start_state(taskset, task, tmp_path)
    writer, head = COPY_WRITERS.get(task.language), HEADS[task.language]
    files = {str(p.relative_to(work)): p.read_text() for g in writer.globs for p in work.glob(g.removeprefix(":(glob)"))}
    others = "\n".join(p.read_text(errors="replace") for p in sorted(work.rglob("*"))
                       if p.is_file() and str(p.relative_to(work)) not in files and p.name != "Cargo.lock")
    known = {name for text in files.values() for name in bodies(text, head)}
    ids = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
    given_away = 0
    for seed in range(PLANS):
        copies = writer.plan(files, list(task.FAIL_TO_PASS), ids, random.Random(seed))
        assert copies.copies, "a task with copies on main"
        now = {**files, **copies.files}
        units, corpus = {}, [others]
        for text in now.values():
            found = {n: u for n, u in _units(text, head).items() if n not in known}
            units.update({n: body for n, (_, _, body) in found.items()})
            for start, end, _ in sorted(found.values(), reverse=True):
                text = text[:start] + text[end:]
            corpus.append(text)
        picked = {twins.pick(at, group, units, "\n".join(corpus)) for at, group in twins.groups(units)}
        short = {run: _short(run, task.language) for run in [*copies.copies, *copies.renamed.values()]}
        originals = {short[copies.renamed[t]] for t in set(copies.copies.values())}
        given_away += originals <= picked and not picked & {short[c] for c in copies.copies}
    assert given_away / PLANS <= GIVEN_AWAY, f"{given_away} of {PLANS} plans gave every original away"


def _short(test_id: str, language: str) -> str:
    """The name a test is written under in its file, from the id it is reported under."""
    if language == "javascript":
        return test_id.split(" ", 1)[1]
    return test_id.split("/")[0].rsplit(".", 1)[-1].removesuffix("()").rsplit("::", 1)[-1]
