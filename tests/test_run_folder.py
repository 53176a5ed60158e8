"""A run folder is the run: renamed or copied, it still builds; attempt paths never collide."""

from __future__ import annotations

import shutil

import pytest

from factory.records import AttemptKey
from factory.run.folder import RunStore
from tests.test_run import factory, outcomes, pipeline_file


@pytest.mark.docker
def test_a_renamed_and_a_copied_run_folder_still_build(tmp_path):
    pipeline = pipeline_file(tmp_path, tasks=1, attempts=1)
    first = factory("run", str(pipeline), "--run-id", "r1", "--quiet")
    assert first.wait(timeout=600) == 0, first.stderr.read()
    renamed = tmp_path / "runs" / "renamed"
    (tmp_path / "runs" / "r1").rename(renamed)
    copied = tmp_path / "elsewhere" / "copy"
    shutil.copytree(renamed, copied)
    for folder in (renamed, copied):
        store = RunStore(folder)
        assert store.run_id == "r1" and outcomes(store)
        build = factory("build", str(folder))
        assert build.wait(timeout=300) == 0, build.stderr.read()
        assert (folder / "dataset" / "README.md").exists()


@pytest.mark.parametrize("ids", [("a/b", "a_b"), ("x y", "x_y"), ("..", "__"), ("%2F", "/")])
def test_task_ids_that_differ_get_different_attempt_paths(tmp_path, ids):
    store = RunStore(tmp_path / "run")
    paths = {store.attempt_path(AttemptKey(run_id="r", instance_id=i, teacher="t/m", index=0)) for i in ids}
    assert len(paths) == 2
    assert all(p.parent.parent.parent == store.attempts_dir for p in paths)
