"""Loaders map SWE-smith rows, SWE-bench rows and the demo task set onto one Task shape."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from factory.config import TasksConfig
from factory.errors import UsageError
from factory.records import Task
from factory.tasks import load_tasks, load_taskset, swesmith_image, task_from_row
from factory.tasks.patches import reverse_patch, touched_files
from factory.tasks.rows import SWESMITH_TEST_ENV, BadRow

DEMO = Path(__file__).parents[2] / "pipelines/tasksets/demo"
BUG = (
    "diff --git a/pkg/mod.py b/pkg/mod.py\nindex 1111111..2222222 100644\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n"
    "@@ -1,3 +1,3 @@\n def f(x):\n-    return x + 1\n+    return x - 1\n \n"
)
SWESMITH_ROW = {
    "instance_id": "acme__widgets.1a2b3c4d.func_pm_op_swap__x1",
    "repo": "swesmith/acme__widgets.1a2b3c4d",
    "patch": BUG,
    "FAIL_TO_PASS": ["tests/test_mod.py::test_f", "tests/test_mod.py::TestF::test_more"],
    "PASS_TO_PASS": ["tests/test_other.py::test_g"],
    "image_name": "swesmith.x86_64.acme__widgets.1a2b3c4d",
    "problem_statement": "f(1) returns 0",
    "created_at": "2025-03-21T08:23:31",
}
SWEBENCH_ROW = {
    "repo": "acme/widgets",
    "instance_id": "acme__widgets-1234",
    "base_commit": "444b6da7cc229a58a2c476a52e45233001dc7073",
    "patch": reverse_patch(BUG),
    "test_patch": "diff --git a/tests/test_mod.py b/tests/test_mod.py\n",
    "problem_statement": "f(1) returns 0",
    "FAIL_TO_PASS": json.dumps(["tests/test_mod.py::test_f"]),
    "PASS_TO_PASS": "[]",
    "version": "1.0",
}


def test_swesmith_row_maps_onto_a_task():
    task = task_from_row(SWESMITH_ROW, source="x.jsonl")
    assert task.image == "swebench/swesmith.x86_64.acme_1776_widgets.1a2b3c4d"
    assert task.start.bug_patch == BUG
    assert task.start.hide_paths == ["tests/test_mod.py"]
    assert task.gold_patch == reverse_patch(BUG)
    assert task.test_cmd == SWESMITH_TEST_ENV and "conda activate testbed" in task.test_cmd
    assert task.source == "swesmith:x.jsonl"


def test_a_row_names_its_language_and_how_its_tests_run_and_are_read():
    tests = {"framework": "command", "command": "go test -json ./...", "results": "go-json", "report": "", "as_root": False}
    task = task_from_row({**SWESMITH_ROW, "language": "go", "tests": tests, "FAIL_TO_PASS": ["TestParse/v_prefix"]})
    assert (task.language, task.tests.model_dump()) == ("go", tests)
    assert task.FAIL_TO_PASS == ["TestParse/v_prefix"] and task.start.hide_paths == []
    plain = task_from_row(SWESMITH_ROW)  # a row without them: Python's pytest
    assert (plain.language, plain.tests.framework) == ("python", "pytest")


def test_swebench_row_with_json_string_lists():
    task = task_from_row(SWEBENCH_ROW)
    assert task.source == "swebench"
    assert task.FAIL_TO_PASS == ["tests/test_mod.py::test_f"] and task.PASS_TO_PASS == []
    assert task.start.base_commit == SWEBENCH_ROW["base_commit"] and task.start.hide_paths == []
    assert task.gold_patch == SWEBENCH_ROW["patch"] and task.test_patch


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("swesmith.x86_64.pandas-dev__pandas.95280573", "swebench/swesmith.x86_64.pandas-dev_1776_pandas.95280573"),
        ("swebench/swesmith.x86_64.a_1776_b.12345678", "swebench/swesmith.x86_64.a_1776_b.12345678"),
        ("factory/demo.semverkit:v1", "factory/demo.semverkit:v1"),
        ("127.0.0.1:5000/swebench/swesmith.x86_64.a__b.1234:latest",
         "127.0.0.1:5000/swebench/swesmith.x86_64.a_1776_b.1234:latest"),
        ("registry.local:443/x__y/swesmith.c__d.1", "registry.local:443/x__y/swesmith.c_1776_d.1"),
    ],
)
def test_swesmith_image_names(old, new):
    assert swesmith_image(old) == new


def test_all_three_sources_give_the_same_task_shape(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(SWESMITH_ROW) + "\n" + json.dumps(SWEBENCH_ROW) + "\n")
    tasks = load_taskset(str(path)).tasks + load_taskset(str(DEMO)).tasks[:1]
    assert len(tasks) == 3
    assert {type(t) for t in tasks} == {Task}
    assert len({tuple(t.model_dump()) for t in tasks}) == 1  # same fields, same order


def test_parquet_source(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([SWEBENCH_ROW]), tmp_path / "t.parquet")
    assert [t.instance_id for t in load_taskset(str(tmp_path / "t.parquet")).tasks] == ["acme__widgets-1234"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"FAIL_TO_PASS": "not json"}, "FAIL_TO_PASS"),
        ({"FAIL_TO_PASS": []}, "FAIL_TO_PASS"),
        ({"PASS_TO_PASS": [1, 2]}, "PASS_TO_PASS"),
        ({"problem_statement": None}, "problem_statement"),
        ({"image_name": 7}, "image_name"),
        ({"repo": ""}, "repo"),
        ({"tests": {"framework": "command", "reader": "go-json"}}, "tests.reader"),
        ({"language": 3}, "language"),
    ],
)
def test_bad_rows_name_the_id_and_the_field(tmp_path, change, field):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({**SWESMITH_ROW, **change}) + "\n" + json.dumps(SWEBENCH_ROW) + "\n")
    report = load_taskset(str(path))
    assert [t.instance_id for t in report.tasks] == ["acme__widgets-1234"]  # the bad row skipped, not the rest
    [bad] = report.skipped
    assert (bad.instance_id, bad.field) == (SWESMITH_ROW["instance_id"], field)
    with pytest.raises(UsageError, match=rf"t.jsonl:1: task {SWESMITH_ROW['instance_id']}: {field}"):
        load_taskset(str(path), strict=True)


def test_broken_json_line_names_file_and_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(SWESMITH_ROW) + "\n{oops\n")
    with pytest.raises(UsageError, match=r"t.jsonl:2: not valid JSON"):
        load_taskset(str(path))


def test_selection_include_exclude_limit_and_seeded_shuffle():
    every = [t.instance_id for t in load_taskset(str(DEMO)).tasks]
    assert len(every) >= 15
    shuffled = [t.instance_id for t in load_tasks(TasksConfig(source=str(DEMO), shuffle_seed=7)).tasks]
    assert sorted(shuffled) == sorted(every) and shuffled != every
    assert shuffled == [t.instance_id for t in load_tasks(TasksConfig(source=str(DEMO), shuffle_seed=7)).tasks]
    assert len(load_tasks(TasksConfig(source=str(DEMO), limit=4)).tasks) == 4
    repo = "factory-demo/cachebox"
    only = load_tasks(TasksConfig(source=str(DEMO), include_repos=[repo])).tasks
    assert only and {t.repo for t in only} == {repo}
    skip = load_tasks(TasksConfig(source=str(DEMO), exclude_ids=[every[0]])).tasks
    assert every[0] not in {t.instance_id for t in skip} and len(skip) == len(every) - 1


def test_missing_sources_are_clear_errors(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        load_taskset(str(tmp_path / "nope.jsonl"))
    with pytest.raises(UsageError, match="without tasks.jsonl"):
        load_taskset(str(tmp_path))


def test_reverse_patch_undoes_the_patch_for_real(tmp_path):
    """Create, modify, delete and no-newline cases, checked by git itself."""
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "a.py").write_text("one\ntwo\nthree\n")
    (repo / "gone.py").write_text("bye\n")
    (repo / "tail.txt").write_text("no newline")
    run = lambda *a, **k: subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *a], cwd=repo,  # noqa: E731
                                         check=True, capture_output=True, text=True, **k)
    run("init", "-q")
    run("add", "-A")
    run("commit", "-qm", "base")
    (repo / "a.py").write_text("one\nTWO\nthree\nfour\n")
    (repo / "gone.py").unlink()
    (repo / "new.py").write_text("hello\n")
    (repo / "tail.txt").write_text("still no newline!")
    run("add", "-A")
    forward = run("diff", "--cached").stdout
    assert set(touched_files(forward)) == {"a.py", "gone.py", "new.py", "tail.txt"}
    run("commit", "-qm", "changed")
    run("apply", "--check", "-", input=reverse_patch(forward))
    run("apply", "-", input=reverse_patch(forward))
    run("add", "-A")
    assert run("diff", "--cached", "HEAD~1").stdout == ""
    assert reverse_patch(reverse_patch(forward)).replace("index ", "") == forward.replace("index ", "")


def test_bad_row_is_a_usage_error():
    assert issubclass(BadRow, UsageError)
