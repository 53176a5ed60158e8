"""The embedded demo task set, checked on the host (no Docker).

Every repo's clean suite passes, every task's bug patch applies with strict
``git apply``, and the patched suite fails exactly the task's FAIL_TO_PASS tests while
every PASS_TO_PASS test still passes. Outcomes are read from pytest's junit XML.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "pipelines" / "tasksets" / "demo"
REPOS = DEMO / "repos"
TASKS = [
    json.loads(line) for line in (DEMO / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
]
BY_REPO: dict[str, list[dict]] = defaultdict(list)
for _task in TASKS:
    BY_REPO[_task["repo"].removeprefix("factory-demo/")].append(_task)

SCHEMA_KEYS = [
    "instance_id",
    "repo",
    "patch",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "image_name",
    "problem_statement",
    "created_at",
    "base_commit",
    "bug_kind",
    "alt_fixes",
]
# Each group must be covered by at least one task.
REQUIRED_KINDS = [
    {"boundary", "off-by-one"},
    {"wrong-operator"},
    {"missing-case"},
    {"wrong-exception"},
    {"state", "caching"},
    {"parsing"},
]


def suite_ids(repo: str) -> set[str]:
    """Every test id of a repo's suite, as the tasks list them (FAIL_TO_PASS + PASS_TO_PASS)."""
    task = BY_REPO[repo][0]
    return set(task["FAIL_TO_PASS"]) | set(task["PASS_TO_PASS"])


def junit_key(node_id: str) -> tuple[str, str]:
    """The (classname, name) under which pytest's junit XML reports ``node_id``."""
    path, bracket, params = node_id.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".").removesuffix(".py")
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def isolated_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "GIT_")) and k != "PYTHONPATH"
    }
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_suite(repo: Path) -> dict[tuple[str, str], str]:
    """Run the repo's suite once; the outcome of each junit test case."""
    report = repo.parent / f"{repo.name}-junit.xml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            f"--junitxml={report}",
            "tests",
        ],
        cwd=repo,
        env=isolated_env(),
        capture_output=True,
        timeout=300,
    )
    assert report.exists(), f"pytest wrote no junit report in {repo}"
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        tags = {child.tag for child in case} & {"failure", "error", "skipped"}
        outcomes[(case.get("classname"), case.get("name"))] = tags.pop() if tags else "passed"
    return outcomes


def copy_repo(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(
        REPOS / name, target, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
    )
    return target


def patched_paths(patch: str) -> list[str]:
    return re.findall(r"^diff --git a/(\S+) b/\S+$", patch, flags=re.M)


# ---------------------------------------------------------------------- the set as a whole


def test_taskset_size_and_kinds():
    assert 3 <= len(BY_REPO) <= 4
    assert sorted(BY_REPO) == sorted(p.name for p in REPOS.iterdir() if p.is_dir())
    assert len(TASKS) >= 15
    ids = [t["instance_id"] for t in TASKS]
    assert len(set(ids)) == len(ids)
    kinds = {t["bug_kind"] for t in TASKS}
    missing = [group for group in REQUIRED_KINDS if not group & kinds]
    assert not missing, f"no task of kind {missing}"
    assert len({t["patch"] for t in TASKS}) == len(TASKS)


@pytest.mark.parametrize("repo", sorted(BY_REPO))
def test_every_task_of_a_repo_lists_the_whole_suite(repo):
    ids = suite_ids(repo)
    assert len(ids) >= 30
    for task in BY_REPO[repo]:
        assert set(task["FAIL_TO_PASS"]) | set(task["PASS_TO_PASS"]) == ids, task["instance_id"]


@pytest.mark.parametrize("repo", sorted(BY_REPO))
def test_repo_layout(repo):
    root = REPOS / repo
    meta = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["name"] == repo
    assert meta["build-system"]["build-backend"] == "setuptools.build_meta"
    assert sorted(p.name for p in root.iterdir() if p.name != "__pycache__") == sorted(
        ["README.md", "pyproject.toml", repo, "tests"]
    )
    assert (root / repo / "__init__.py").is_file()
    assert list(root.rglob("conftest.py")) == []
    assert not (root / "tests" / "__init__.py").exists()
    assert all(p.name.startswith("test_") for p in (root / "tests").glob("*.py"))


@pytest.mark.parametrize("task", TASKS, ids=[t["instance_id"] for t in TASKS])
def test_task_row(task):
    assert list(task) == SCHEMA_KEYS
    repo = task["repo"].removeprefix("factory-demo/")
    assert task["repo"] == f"factory-demo/{repo}"
    assert task["image_name"] == f"factory/demo.{repo}:v1"
    assert task["instance_id"].startswith(f"factory-demo__{repo}.")
    assert task["base_commit"] is None
    assert task["problem_statement"].startswith("# ")
    assert "```python" in task["problem_statement"]
    assert task["patch"].startswith("diff --git a/") and task["patch"].endswith("\n")
    paths = patched_paths(task["patch"])
    assert paths and all(p.startswith(f"{repo}/") for p in paths), paths
    assert 1 <= len(task["FAIL_TO_PASS"]) <= 5
    assert not set(task["FAIL_TO_PASS"]) & set(task["PASS_TO_PASS"])
    for node_id in task["FAIL_TO_PASS"] + task["PASS_TO_PASS"]:
        assert re.fullmatch(r"tests/test_\w+\.py::[\w:]+(\[[\w.-]+\])?", node_id), node_id


# ---------------------------------------------------------------------- running the tasks


@pytest.mark.parametrize("task", TASKS, ids=[t["instance_id"] for t in TASKS])
def test_patch_breaks_exactly_fail_to_pass(task, tmp_path):
    repo = copy_repo(task["repo"].removeprefix("factory-demo/"), tmp_path)
    expected = {junit_key(i) for i in task["FAIL_TO_PASS"] + task["PASS_TO_PASS"]}

    clean = run_suite(repo)
    assert set(clean) == expected, "the clean suite is not the one the task lists"
    assert {k: v for k, v in clean.items() if v != "passed"} == {}

    subprocess.run(["git", "init", "-q"], cwd=repo, env=isolated_env(), check=True)
    applied = subprocess.run(
        ["git", "apply", "-"],
        cwd=repo,
        input=task["patch"],
        text=True,
        capture_output=True,
        env=isolated_env(),
    )
    assert applied.returncode == 0, applied.stderr

    bugged = run_suite(repo)
    still_passing = [
        i for i in task["FAIL_TO_PASS"] if bugged.get(junit_key(i), "missing") == "passed"
    ]
    broken = [i for i in task["PASS_TO_PASS"] if bugged.get(junit_key(i), "missing") != "passed"]
    assert still_passing == [], "FAIL_TO_PASS tests that pass with the bug"
    assert broken == [], "PASS_TO_PASS tests that fail with the bug"

    subprocess.run(["git", "add", "-A"], cwd=repo, env=isolated_env(), check=True)
    for i, fix in enumerate(task["alt_fixes"]):  # each other correct fix passes the whole suite
        assert subprocess.run(["git", "apply", "-"], cwd=repo, input=fix, text=True, env=isolated_env()).returncode == 0
        fixed = run_suite(repo)
        assert {k: v for k, v in fixed.items() if v != "passed"} == {}, f"alt_fixes[{i}]"
        subprocess.run(["git", "checkout", "-q", "--", "."], cwd=repo, env=isolated_env(), check=True)
