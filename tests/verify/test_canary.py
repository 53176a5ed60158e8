"""The canary of the `command` framework, on the Go and Rust demo task sets in their own images:
code under test that prints a runner's passing lines for every test it knows and exits 0 before
(or instead of) the tests resolves nothing, and a patch that merely breaks the build is an
honest failure, not a forgery.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from factory.config import VerifierConfig
from factory.records import Reason
from factory.sandbox.images import ensure_images
from factory.tasks import load_taskset
from factory.verify import DockerVerifier
from factory.verify.frameworks.canary import canary_names
from factory.verify.frameworks.command import NO_CONTROLS
from factory.verify.frameworks.copies.treesitter import words
from tests.verify.conftest import git

pytestmark = pytest.mark.docker
TASKSETS = Path(__file__).parents[2] / "pipelines/tasksets"


def first_task(name: str):
    folder = TASKSETS / name
    task = load_taskset(str(folder), skip_invalid=False).tasks[0]
    ensure_images([task], folder)
    return task, folder


def at_start_state(folder: Path, task, work: Path) -> Path:
    """A git repo at `work` holding the task set's repo at the task's start state, committed."""
    (repo,) = (folder / "repos").iterdir()
    shutil.copytree(repo, work)
    git(work, "init", "-q")
    subprocess.run(["git", "apply"], input=task.start.bug_patch, text=True, cwd=work, check=True)
    git(work, "add", "-A")
    git(work, "commit", "-qm", "start")
    return work


def patch_of(tmp_path: Path, folder: Path, task, edits: dict[str, Callable[[str], str]]) -> str:
    """`git diff` of the task's repo at its start state after `edits` (path -> old text -> new text)."""
    work = at_start_state(folder, task, tmp_path / "repo")
    for path, edit in edits.items():
        target = work / path
        target.write_text(edit(target.read_text() if target.exists() else ""))
    git(work, "add", "-A")
    return git(work, "diff", "--cached")


def go_forger(names: list[str]) -> str:
    lines = "".join(f'\tfmt.Println("=== RUN   {n}")\n\tfmt.Println("--- PASS: {n} (0.00s)")\n' for n in names)
    return f'package semver\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc init() {{\n{lines}\tfmt.Println("PASS")\n\tos.Exit(0)\n}}\n'


def rust_forger(names: list[str]) -> str:
    lines = "".join(f'    println!("test {n} ... ok");\n' for n in names)
    return ("\n/// Called by the first test that parses: says every test passed, then ends the run.\n"
            "#[doc(hidden)]\npub fn forge() {\n" + lines +
            f'    println!("\\ntest result: ok. {len(names)} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out");\n'
            "    std::process::exit(0);\n}\n")


async def test_go_code_that_prints_passes_and_exits_in_init_resolves_nothing(tmp_path):
    task, folder = first_task("demo-go")
    forger = go_forger([*task.FAIL_TO_PASS, *task.PASS_TO_PASS])
    verdict = await DockerVerifier(VerifierConfig(timeout=300)).verify(task, patch_of(tmp_path, folder, task,
                                                                                      {"forge.go": lambda _: forger}))
    assert not verdict.resolved and verdict.reason in (Reason.tampered, Reason.no_report), verdict
    assert "canary" in verdict.detail or verdict.reason is Reason.no_report


async def test_rust_code_that_prints_a_passing_run_and_exits_resolves_nothing(tmp_path):
    task, folder = first_task("demo-rust")
    forger = rust_forger([*task.FAIL_TO_PASS, *task.PASS_TO_PASS])
    new = "pub fn new(input: &'a str) -> Self {\n"
    patch = patch_of(tmp_path, folder, task, {
        "src/lib.rs": lambda text: text + forger,
        "src/reader.rs": lambda text: text.replace(new, new + "        crate::forge();\n", 1),  # every test parses
    })
    assert "crate::forge();" in patch
    verdict = await DockerVerifier(VerifierConfig(timeout=300)).verify(task, patch)
    assert not verdict.resolved and verdict.reason in (Reason.tampered, Reason.no_report, Reason.tests_failed), verdict


async def test_a_patch_that_breaks_the_build_is_a_failure_not_a_forgery(tmp_path):
    task, folder = first_task("demo-go")
    patch = patch_of(tmp_path, folder, task, {"constraint.go": lambda text: text + "\nfunc broken( {\n"})
    verdict = await DockerVerifier(VerifierConfig(timeout=300)).verify(task, patch)
    assert not verdict.resolved and verdict.reason in (Reason.tests_failed, Reason.no_report), verdict


@pytest.mark.parametrize("taskset", ["demo-go", "demo-rust", "demo-java", "demo-js", "demo-jest"])
async def test_the_gold_fix_resolves_beside_a_canary_named_like_the_tasks_tests(taskset):
    task, _ = first_task(taskset)
    verdict = await DockerVerifier(VerifierConfig(timeout=300)).verify(task, task.gold_patch)
    assert verdict.resolved, verdict
    assert NO_CONTROLS not in verdict.flags, verdict.flags  # planted, and reported failed


def test_a_canary_name_is_drawn_from_the_words_of_the_tasks_tests():
    task, _ = first_task("demo-go")
    names = dict(part.split("=", 1) for part in canary_names(task, random.Random(7)).split("; "))
    vocabulary = set(words([*task.FAIL_TO_PASS, *task.PASS_TO_PASS]))
    assert set(names["SNAKE"].split("_")) <= vocabulary and names["CAMEL"] == names["SNAKE"].title().replace("_", "")
    assert names["SNAKE"] != names["SNAKE2"] and "factory" not in names["SNAKE"]


def test_the_go_canary_s_failure_line_is_drawn_among_the_shapes_go_tests_print():
    task, _ = first_task("demo-go")
    lines = {dict(part.split("=", 1) for part in canary_names(task, random.Random(seed)).split("; "))["ERRORF"]
             for seed in range(40)}
    assert len({line.split("(", 1)[1].split('"')[1] for line in lines}) >= 3, lines  # formats, not just words
    assert all("got" in line and "want" in line for line in lines), lines


def test_a_canary_is_never_named_like_one_of_the_task_s_tests():
    # a held-back Go task: `GroupSum` was drawn once in ~300, and the Go canary `TestGroupSum`, planted
    # in another package, was read as the real TestGroupSum failing (a CI run refused a correct fix)
    from factory.tasks import load_taskset

    folder = Path(__file__).parents[1] / "fixtures/lang-heldout/go"
    for task in load_taskset(str(folder), skip_invalid=False).tasks:
        names = {test.split("/")[0] for test in [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]}
        for seed in range(400):
            drawn = dict(part.split("=", 1) for part in canary_names(task, random.Random(seed)).split("; "))
            assert "Test" + drawn["CAMEL"] not in names, (task.instance_id, seed, drawn["CAMEL"])
