"""One process per run, and bad input that costs no run id (real `factory` processes).

A second `factory run` on a live run id used to reap the first one's containers and sample
the same units again (paid twice, attempt files damaged); `factory build` and `push` on a
live run were second writers of its warehouse and dataset. A malformed task line or a
missing API key, found after the run folder existed, left a run marked `running`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from factory.errors import UsageError
from factory.run.folder import RunStore
from tests.test_run import ROOT, factory, outcomes, pipeline_file

HOLD = ("import sys, time; from pathlib import Path; from factory.run.folder import RunStore; "
        "lock = RunStore(Path(sys.argv[1])).locked(); lock.__enter__(); print('held', flush=True); time.sleep(600)")


def hold(folder) -> subprocess.Popen:
    """Another live process that holds the run (as a running `factory run` does)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.docker
def test_a_held_run_refuses_a_second_process_and_a_dead_holder_lets_go(tmp_path):
    pipeline = pipeline_file(tmp_path, tasks=1, attempts=1)
    first = factory("run", str(pipeline), "--run-id", "r1", "--quiet")
    assert first.wait(timeout=600) == 0, first.stderr.read()
    store = RunStore(tmp_path / "runs" / "r1")
    before = outcomes(store)

    holder = hold(store.folder)
    try:
        for args in (["run", str(pipeline), "--run-id", "r1", "--quiet"], ["build", str(store.folder)],
                     ["push", str(store.folder), "--repo-id", "org/name"]):
            second = factory(*args)
            assert second.wait(timeout=120) == 2, args
            error = second.stderr.read()
            assert f"run r1 is in use by pid {holder.pid}" in error, error
            assert len(error.strip().splitlines()) == 1, error
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()

    again = factory("run", str(pipeline), "--run-id", "r1", "--quiet")  # the kernel dropped the dead holder's lock
    assert again.wait(timeout=600) == 0, again.stderr.read()
    assert outcomes(store) == before
    assert json.loads((store.folder / "run.json").read_text())["status"] == "finished"


def test_the_lock_is_one_holder_at_a_time_in_one_process_too(tmp_path):
    store = RunStore(tmp_path / "r")
    with store.locked(), pytest.raises(UsageError, match=f"pid {os.getpid()}"), RunStore(tmp_path / "r").locked():
        pass
    with store.locked():  # released on leaving
        pass


@pytest.mark.parametrize("breakage", ["malformed task line", "missing API key"])
def test_bad_input_fails_before_the_run_folder_exists(tmp_path, breakage):
    extra = ""
    if breakage == "malformed task line":
        tasks = tmp_path / "tasks.jsonl"
        tasks.write_text('{"instance_id": "x", "repo": \n')
        source = str(tasks)
    else:
        source = str(ROOT / "pipelines/tasksets/demo")
        extra = "  - kind: anthropic\n    model: claude-sonnet-4-5\n    api_key_env: FACTORY_TEST_NO_SUCH_KEY\n"
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text(f"name: t\ntasks:\n  source: {source}\n  limit: 1\nteachers:\n{extra}"
                        f"  - kind: scripted\n    model: scripted-x\noutput:\n  dir: {tmp_path / 'runs'}\n")
    run = factory("run", str(pipeline), "--run-id", "r1", "--quiet")
    assert run.wait(timeout=120) == 2
    error = run.stderr.read()
    assert len(error.strip().splitlines()) == 1, error
    assert not (tmp_path / "runs" / "r1").exists()


@pytest.mark.docker
def test_a_run_that_fails_after_it_started_says_so_in_run_json(tmp_path):
    pipeline = pipeline_file(tmp_path, tasks=1, attempts=1, extra="warehouse:\n  path: /proc/no-such-dir/w.duckdb\n")
    run = factory("run", str(pipeline), "--run-id", "r1", "--quiet")
    assert run.wait(timeout=300) != 0
    meta = json.loads((tmp_path / "runs" / "r1" / "run.json").read_text())
    assert meta["status"] == "failed"
    assert "no-such-dir" in meta["error"]


@pytest.mark.docker
def test_a_resume_with_other_resolved_settings_is_refused_unless_allowed(tmp_path):
    pipeline = pipeline_file(tmp_path, tasks=1, attempts=1)
    pipeline.write_text(pipeline.read_text().replace("seed: 3", "seed: ${TSEED:-0}"))
    env = {**os.environ, "TSEED": "1"}
    first = factory("run", str(pipeline), "--run-id", "r1", "--quiet", env=env)
    assert first.wait(timeout=600) == 0, first.stderr.read()
    store = RunStore(tmp_path / "runs" / "r1")
    before = outcomes(store)

    for change, args in ((("TSEED", "2"), ()), (None, ("--limit", "2"))):
        resumed = factory("run", str(pipeline), "--run-id", "r1", "--quiet", *args,
                          env={**env, **dict([change])} if change else env)
        assert resumed.wait(timeout=120) == 2
        error = resumed.stderr.read()
        assert ("teachers[0].seed" if change else "tasks.limit, the task selection") in error, error
        assert outcomes(store) == before

    allowed = factory("run", str(pipeline), "--run-id", "r1", "--quiet", "--limit", "2", "--allow-changes", env=env)
    assert allowed.wait(timeout=600) == 0, allowed.stderr.read()
    meta = json.loads((store.folder / "run.json").read_text())
    assert meta["changes"][-1]["changed"] == ["tasks.limit", "the task selection"]
    assert len(outcomes(store)) == 2 and set(before) < set(outcomes(store))


def test_a_setting_newer_than_the_run_is_no_difference_while_it_keeps_its_default(tmp_path):
    """A run started by an older factory has no digest of settings added since: those at their
    default ran as the run did, so its resume needs no --allow-changes; one set otherwise does."""
    pipeline = pipeline_file(tmp_path, tasks=1, attempts=1)
    first = factory("run", str(pipeline), "--run-id", "old", "--quiet")
    assert first.wait(timeout=600) == 0, first.stderr.read()
    run_json = tmp_path / "runs" / "old" / "run.json"

    def forget(prefix: str) -> None:  # as a factory that had no such setting wrote run.json
        meta = json.loads(run_json.read_text())
        gone = [k for k in meta["identity"] if k.startswith(prefix)]
        assert gone, prefix
        meta["identity"] = {k: v for k, v in meta["identity"].items() if k not in gone}
        run_json.write_text(json.dumps(meta))

    forget("sampling.hopeless.")  # at their defaults in this pipeline
    resumed = factory("run", str(pipeline), "--run-id", "old", "--quiet")
    assert resumed.wait(timeout=600) == 0, resumed.stderr.read()

    forget("teachers[0].seed")  # 3 in this pipeline, not its default
    refused = factory("run", str(pipeline), "--run-id", "old", "--quiet")
    assert refused.wait(timeout=120) == 2
    error = refused.stderr.read()
    assert "teachers[0].seed" in error and "hopeless" not in error, error
