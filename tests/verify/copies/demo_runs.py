"""What the copy writers' tests share: how a copy differs from its original (token by token),
and a demo task run for real with its copies planted."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from factory.records import Task, TestStatus
from factory.verify.frameworks.copies.base import Copies, CopyWriter
from factory.verify.frameworks.copies.treesitter import parse, source, walk
from factory.verify.results import read, status_of
from factory.verify.results.record import Results
from tests.verify.conftest import git

LEAVES = ("string", "template_string", "string_literal", "character_literal", "interpreted_string_literal",
          "raw_string_literal", "rune_literal", "char_literal")
"""Nodes compared whole: a string is one token however its grammar splits it."""


def tokens(grammar: str, text: str) -> list[str]:
    root = parse(grammar, text)
    assert root is not None, text
    found, skip = [], set()
    for node in walk(root):
        if any(a in skip for a in _ancestors(node)):
            continue
        if node.type in LEAVES or node.child_count == 0:
            found.append(source(node))
            skip.add(node.id)
    return found


def _ancestors(node):
    while (node := node.parent) is not None:
        yield node.id


def token_changes(grammar: str, original: str, copy: str) -> list[tuple[str, str]]:
    """The tokens where `copy` differs from `original` (same token count asserted)."""
    a, b = tokens(grammar, original), tokens(grammar, copy)
    return [(a[i], b[i]) for i in changed_at(grammar, original, copy)]


def changed_at(grammar: str, original: str, copy: str) -> tuple[int, ...]:
    """The positions of the tokens where `copy` differs from `original` (same token count asserted)."""
    a, b = tokens(grammar, original), tokens(grammar, copy)
    assert len(a) == len(b), (original, copy)
    return tuple(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)


@dataclass
class DemoRun:
    copies: Copies
    results: Results

    def status(self, test_id: str) -> TestStatus:
        return status_of(self.results, test_id)[0]


def run_with_copies(task: Task, folder: Path, writer: CopyWriter, work: Path, seed: int) -> DemoRun:
    """The task's repo at its gold patch, the writer's copies written into its test files (as the
    readback would hand them: every file of the writer's globs), the task's command run in the
    base image, its report read."""
    (source_repo,) = (folder / "repos").iterdir()
    repo = work / "repo"
    shutil.copytree(source_repo, repo)
    git(repo, "init", "-q")
    for patch in (task.start.bug_patch, task.gold_patch):
        subprocess.run(["git", "apply"], input=patch, text=True, cwd=repo, check=True)
    git(repo, "add", "-A")
    listed = subprocess.run(["git", "ls-files", "--", *(f":(glob){g}" for g in writer.globs)],
                            cwd=repo, check=True, capture_output=True, text=True).stdout.split()
    files = {path: (repo / path).read_text() for path in listed}
    ids = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
    copies = writer.plan(files, list(task.FAIL_TO_PASS), ids, random.Random(seed))
    for path, text in copies.files.items():
        (repo / path).write_text(text)
    image = json.loads((folder / "taskset.json").read_text())["base_image"]
    spec = task.tests
    script = f'export REPORT_DIR=/tmp/report && mkdir -p $REPORT_DIR && cd /w && {spec.command}; ' \
             f'echo "exit=$?" > /w/.exit; cat $REPORT_DIR/{spec.report} > /w/.report'
    subprocess.run(["docker", "run", "--rm", "--network", "none", "--label", "factory.test=copies-jvmjs",
                    "-v", f"{repo}:/w", image, "sh", "-c", script], check=False, capture_output=True, timeout=600)
    exit_code = int((repo / ".exit").read_text().strip().removeprefix("exit="))
    return DemoRun(copies, read(spec.results, (repo / ".report").read_text(), exit_code=exit_code))
