"""Which Go commands root compiles (`frameworks/go_exec.py`): only a plain `go test ...`, whose
only program is the image's Go toolchain; anything that could run the patch's code stays with the
tests' user."""

from __future__ import annotations

import pytest

from factory.records import Task, TestSpec
from factory.verify.frameworks import go_exec


def task(command: str, language: str = "go", as_root: bool = False) -> Task:
    return Task(instance_id="t", repo="r", problem_statement="", image="i", language=language,
                tests=TestSpec(framework="command", command=command, results="go-json", as_root=as_root))


@pytest.mark.parametrize("command", ["go test -json ./...", "go test -json -count=1 ./pkg/...",
                                     "go test -json -run TestX ."])
def test_a_plain_go_test_is_compiled_by_root(command):
    assert go_exec.root_builds(task(command))


@pytest.mark.parametrize("command", [
    "make test", "sh run-tests.sh", "go test -json ./... | tee out", "cd x && go test -json ./...",
    "go test -json -exec ./wrap ./...", "go test -toolexec ./t ./...", "go test -overlay o.json ./...",
    "go vet ./...", "GOFLAGS=-x go test ./...", "go test $(go list ./...)",
])
def test_anything_else_runs_as_the_tests_user(command):
    assert not go_exec.root_builds(task(command))


def test_other_languages_and_root_tasks_are_left_alone():
    assert not go_exec.root_builds(task("go test -json ./...", language="rust"))
    assert not go_exec.root_builds(task("go test -json ./...", as_root=True))
