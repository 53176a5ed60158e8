"""`factory run` end to end: the real scheduler, sandboxes, verifier, warehouse and dataset.

The scripted teacher (offline, seeded) drives the runs; a real subprocess is killed with
SIGKILL or interrupted with SIGINT to test resume.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
import yaml

from factory.config import load_pipeline
from factory.run.folder import RunStore
from factory.run.progress import QuietProgress
from factory.run.runner import run_pipeline
from factory.verify.verifier import REUSED

pytestmark = pytest.mark.docker
ROOT = Path(__file__).parent.parent
DEMO = ROOT / "pipelines/tasksets/demo"


def pipeline_file(tmp_path: Path, *, tasks: int = 2, attempts: int = 2, stop: int = 3, in_flight: int = 4,
                  profile: str = "{solve: 1.0}", latency: float = 0.0, extra: str = "") -> Path:
    rates = {"solve": 0, "wrong_fix": 0, "loop": 0, "format_error": 0, "give_up": 0}
    rates.update(yaml.safe_load(profile))
    profile = "{" + ", ".join(f"{k}: {v}" for k, v in rates.items()) + "}"
    path = tmp_path / "p.yaml"
    path.write_text(f"""\
name: t
tasks:
  source: {DEMO}
  limit: {tasks}
teachers:
  - kind: scripted
    model: scripted-test
    seed: 3
    profile: {profile[:-1]}, latency_seconds: {latency}}}
agent:
  max_turns: 30
sandbox:
  memory: 512m
  max_live: {in_flight + 2}
sampling:
  attempts_per_task: {attempts}
  max_in_flight: {in_flight}
filters:
  cap: {{per_task: {stop}}}
verifier:
  timeout: 120
output:
  dir: {tmp_path / "runs"}
{extra}""")
    return path


def factory(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "factory.cli", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def kill_when(proc: subprocess.Popen, ready: Callable[[], bool]) -> None:
    """kill -9 `proc` once `ready()` holds; it must still be running then."""
    try:
        deadline = time.monotonic() + 300  # a guard against a hang, not a speed assertion
        while not ready():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        proc.kill()


def outcomes(store: RunStore) -> dict[tuple, str]:
    return {
        (a.key.instance_id, a.key.teacher, a.key.index): (
            f"{a.trajectory.exit}:{a.verdict.resolved if a.verdict else None}" if a.trajectory else str(a.error_class)
        )
        for a in store.attempts()
    }


def warehouse_keys(store: RunStore) -> list[tuple]:
    with duckdb.connect(str(store.warehouse_path), read_only=True) as db:
        return db.execute("select instance_id, teacher, attempt_index from attempts where run_id = ?",
                          [store.run_id]).fetchall()


async def run(path: Path, run_id: str):
    return await run_pipeline(load_pipeline(path), run_id=run_id, progress=QuietProgress(), command="test")


async def test_early_stop_launches_no_attempt_a_task_no_longer_needs(tmp_path, docker_client):
    outcome = await run(pipeline_file(tmp_path, tasks=2, attempts=4, stop=1), "early")
    keys = [a.key for a in outcome.store.attempts()]
    assert Counter(k.instance_id for k in keys) == Counter({k.instance_id: 1 for k in keys})
    assert len(keys) == 2 and outcome.result.launched == 2
    assert all(a.verdict and a.verdict.resolved for a in outcome.store.attempts())
    # the dataset and its card were built at the end
    assert outcome.build is not None and outcome.build.rows == 2 == outcome.result.kept
    assert (outcome.store.dataset_dir / "README.md").exists()
    assert "scripted" in (outcome.store.dataset_dir / "README.md").read_text()


async def test_give_up_after_straight_failures(tmp_path, docker_client):
    path = pipeline_file(tmp_path, tasks=1, attempts=5, in_flight=1, profile="{solve: 0.0, give_up: 1.0}",
                         extra="")
    text = path.read_text().replace("  max_in_flight: 1\n", "  max_in_flight: 1\n  give_up_after_failures: 2\n")
    path.write_text(text)
    outcome = await run(path, "giveup")
    assert len(outcome.store.attempts()) == 2


def kill_9_then_resume(path: Path, run_id: str, docker_client) -> tuple[RunStore, list[dict]]:
    """Run `path` (6 units), kill -9 the run after 2 finished attempts, resume it with the same
    command; checks that every unit was made exactly once, in the files and the warehouse, and
    that no container of the run is left. Returns the run and its containers the kill left."""
    store = RunStore(path.parent / "runs" / run_id)
    proc = factory("run", str(path), "--run-id", run_id, "--quiet")
    kill_when(proc, lambda: len(list(store.attempts_dir.glob("*/*/*.json"))) >= 2)
    before = set(outcomes(store))
    assert 2 <= len(before) < 6
    # one list call: an inspect per container would 404 on a removal the killed process had in flight
    labelled = docker_client.api.containers(all=True, filters={"label": f"factory.run={run_id}"})
    resumed = factory("run", str(path), "--run-id", run_id, "--quiet")
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    after = outcomes(store)
    assert before <= set(after) and len(after) == 6  # every unit exactly once
    keys = warehouse_keys(store)
    assert len(keys) == len(set(keys)) == 6
    left = docker_client.api.containers(all=True, filters={"label": f"factory.run={run_id}"})
    assert left == [], [(c["State"], c["Status"], c["Labels"]) for c in left]  # reaped
    return store, labelled


def test_kill_9_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path, docker_client):
    path = pipeline_file(tmp_path, tasks=3, attempts=2, stop=5, in_flight=2, latency=0.3)
    _, labelled = kill_9_then_resume(path, "killed", docker_client)
    assert labelled  # the killed process left containers behind, and the resume reaped them


def test_interrupt_then_resume_gives_the_same_attempts_as_one_run(tmp_path, docker_client):
    profile = "{solve: 0.5, wrong_fix: 0.3, give_up: 0.2}"
    path = pipeline_file(tmp_path, tasks=2, attempts=3, stop=10, in_flight=2, profile=profile, latency=0.2)
    proc = factory("run", str(path), "--run-id", "split")
    store = RunStore(tmp_path / "runs" / "split")
    deadline = time.monotonic() + 300
    while not list(store.attempts_dir.glob("*/*/*.json")):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)  # first Ctrl-C: finish what is in flight, launch nothing new
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "interrupted" in out
    partial = len(store.attempts())
    assert 1 <= partial < 6
    done = factory("run", str(path), "--run-id", "split", "--quiet").communicate(timeout=600)
    whole = factory("run", str(path), "--run-id", "whole", "--quiet")
    whole.communicate(timeout=600)
    assert outcomes(store) == outcomes(RunStore(tmp_path / "runs" / "whole")), done[1]
    assert json.loads((store.folder / "run.json").read_text())["resumed"] == 1


def test_query_answers_while_a_run_is_writing(tmp_path, docker_client):
    path = pipeline_file(tmp_path, tasks=3, attempts=2, stop=5, in_flight=2, latency=0.2)
    db = tmp_path / "runs" / "live" / "warehouse.duckdb"
    proc = factory("run", str(path), "--run-id", "live", "--quiet")
    answers = []
    try:
        deadline = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < deadline:
            if db.exists():
                q = subprocess.run([sys.executable, "-m", "factory.cli", "query", "select count(*) as n from attempts",
                                    "--db", str(db), "--format", "json"], capture_output=True, text=True, cwd=ROOT)
                assert q.returncode == 0, q.stderr
                answers.append(json.loads(q.stdout)[0]["n"])
            time.sleep(0.5)
    finally:
        out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert answers and answers == sorted(answers)  # answered during the run, counts only grow
    assert any(n < 6 for n in answers)
    funnel = subprocess.run([sys.executable, "-m", "factory.cli", "query", "funnel", "--db", str(db), "--format", "json"],
                            capture_output=True, text=True, cwd=ROOT)
    assert funnel.returncode == 0 and json.loads(funnel.stdout)


def paid_pipeline(tmp_path: Path, api_url: str, *, attempts: int, budget: str = "", tasks: int = 1,
                  in_flight: int = 1, teacher: str = "") -> Path:
    """A gpt-4.1 teacher at the stand-in `api_url`; `teacher`: more lines of its config."""
    path = tmp_path / "paid.yaml"
    path.write_text(f"""\
name: paid
tasks:
  source: {DEMO}
  limit: {tasks}
teachers:
  - kind: openai
    model: gpt-4.1
    name: gpt
    base_url: {api_url}
    api_key: sk-test-not-a-real-key
    max_retries: 1
    backoff_initial: 0.01
    backoff_max: 0.02
{teacher}sandbox:
  memory: 512m
sampling:
  attempts_per_task: {attempts}
  max_in_flight: {in_flight}
  infra_retries: 1
filters:
  cap: {{per_task: 5}}
output:
  dir: {tmp_path / "runs"}
{budget}""")
    return path


SUBMIT_MILLION = {"prompt_tokens": 1_000_000, "completion_tokens": 0, "total_tokens": 1_000_000}


async def test_budget_stops_launching_and_the_summary_says_so(tmp_path, docker_client):
    from tests.teachers.fake_api import FakeAPI, openai_completion

    with FakeAPI() as api:
        api.openai(*[openai_completion(tool_calls=[{"name": "submit", "arguments": {}}], usage=SUBMIT_MILLION)] * 5)
        path = paid_pipeline(tmp_path, api.openai_url, attempts=5,
                             budget="budget:\n  max_cost_usd: 5.0\nagent:\n  max_cost_usd: 2.0\n")
        outcome = await run(path, "budget")
    assert outcome.result.stopped == "budget"
    assert len(outcome.store.attempts()) == 2  # $2 each, a ceiling of $2: the third would pass $5
    assert outcome.result.spent_usd == pytest.approx(4.0)
    assert all("sk-test-not-a-real-key" not in p.read_text() for p in outcome.store.attempts_dir.rglob("*.json"))


async def test_an_api_outage_is_retried_as_infrastructure_not_counted_as_the_model(tmp_path, docker_client):
    from tests.teachers.fake_api import FakeAPI, openai_completion, server_error

    with FakeAPI() as api:
        api.openai(server_error(), server_error(), openai_completion(tool_calls=[{"name": "submit", "arguments": {}}]))
        outcome = await run(paid_pipeline(tmp_path, api.openai_url, attempts=1), "outage")
    [attempt] = outcome.store.attempts()
    assert attempt.error_class is None and attempt.trajectory.exit == "submitted"
    assert len(attempt.infra_failures) == 1 and "teacher_error" in attempt.infra_failures[0]
    with duckdb.connect(str(outcome.store.warehouse_path), read_only=True) as db:
        assert db.execute("select count(*) from attempts").fetchone()[0] == 1


def journal_a_paid_turn(path: Path, run_id: str):
    """What a crash mid-attempt leaves: one paid turn (`ls`, $0.00208) in the journal of the
    run's attempt 0 of teacher `gpt` on its one task. Returns the store and that attempt's key."""
    from factory.records import AttemptKey, Completion, Message, ToolCall, Usage
    from factory.run.runner import load_run_tasks

    [task], _ = load_run_tasks(load_pipeline(path))
    store = RunStore(path.parent / "runs" / run_id)
    key = AttemptKey(run_id=run_id, instance_id=task.instance_id, teacher="gpt", index=0)
    paid = Completion(
        message=Message(role="assistant", content="Looking around.",
                        tool_calls=[ToolCall(id="call_1", name="bash", arguments='{"command": "ls"}')]),
        usage=Usage(input_tokens=1000, output_tokens=10), cost_usd=0.00208,
    )
    store.journal_path(key).parent.mkdir(parents=True)
    store.journal_path(key).write_text(paid.model_dump_json() + "\n")
    return store, key


async def test_a_redone_attempt_replays_the_turns_already_paid_for(tmp_path, docker_client):
    """A crash mid-attempt left one paid turn in the journal: the redo must not buy it again."""
    from tests.teachers.fake_api import FakeAPI, openai_completion

    with FakeAPI() as api:
        api.openai(openai_completion(tool_calls=[{"name": "submit", "arguments": {}}]))
        path = paid_pipeline(tmp_path, api.openai_url, attempts=1)
        store, key = journal_a_paid_turn(path, "replay")
        outcome = await run(path, "replay")
        assert len(api.requests) == 1  # only the turn past the journal reached the API
    [attempt] = outcome.store.attempts()
    assert attempt.trajectory.exit == "submitted"
    assert attempt.trajectory.messages[2].content == "Looking around."  # the replayed turn is in the record
    assert "README.md" in attempt.trajectory.messages[3].content  # and its tool call ran again for real
    assert not store.journal_path(key).exists()


async def test_an_attempt_that_infrastructure_ended_keeps_its_paid_turns_for_the_redo(tmp_path, docker_client):
    """The teacher's API failed past every retry after one paid turn: the attempt is saved as
    `teacher_error`, and the resume that samples it again replays that turn instead of buying it."""
    from tests.teachers.fake_api import FakeAPI, openai_completion, server_error

    look = openai_completion(tool_calls=[{"name": "bash", "arguments": {"command": "ls"}}])
    with FakeAPI() as api:
        # try 1: a paid turn, then 2 failures (max_retries 1); try 2 replays the turn, 2 failures
        api.openai(look, *[server_error()] * 4, openai_completion(tool_calls=[{"name": "submit", "arguments": {}}]))
        path = paid_pipeline(tmp_path, api.openai_url, attempts=1)
        first = await run(path, "outage-after-a-turn")
        [attempt] = first.store.attempts()
        assert attempt.error_class == "teacher_error" and len(api.requests) == 5
        again = await run(path, "outage-after-a-turn")
        assert len(api.requests) == 6  # only the turn past the paid one reached the API
    [attempt] = again.store.attempts()
    assert attempt.error_class is None and attempt.trajectory.exit == "submitted"
    assert "README.md" in attempt.trajectory.messages[3].content  # the paid turn's command ran again
    assert not first.store.journal_path(attempt.key).exists()


@pytest.mark.parametrize("interrupts", [0, 1, 2])
def test_a_run_however_it_ends_leaves_no_container(tmp_path, docker_client, interrupts):
    """Containers started ahead for verifications, verdicts reused for identical patches (the
    scripted teacher's fixes of a task are alike), attempts saved by the cap, and the run ended by
    itself, by one Ctrl-C (finish what is in flight) or by two (stop now): once the process has
    exited, no container of its run is on the engine, and (but for two Ctrl-C, which cancel removals
    under way) none had to be swept up at the end."""
    path = pipeline_file(tmp_path, tasks=4, attempts=4, stop=2, in_flight=6, latency=0.2,
                         profile="{solve: 0.7, give_up: 0.3}")
    run_id = f"ends-{interrupts}"
    store = RunStore(tmp_path / "runs" / run_id)
    proc = factory("run", str(path), "--run-id", run_id)
    deadline = time.monotonic() + 300  # a guard against a hang, not a speed assertion
    while interrupts and not list(store.attempts_dir.glob("*/*/*.json")):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    for _ in range(interrupts):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == (130 if interrupts else 0), err
    left = docker_client.api.containers(all=True, filters={"label": f"factory.run={run_id}"})
    assert left == [], [(c["State"], c["Labels"].get("factory.attempt")) for c in left]
    if interrupts < 2:  # "stop now" cancels removals under way; the run's end sweeps them and says so
        assert "left on the engine" not in out + err
    if not interrupts:  # the run went through what the docstring says
        verdicts = [a.verdict for a in store.attempts() if a.verdict]
        assert any(REUSED in v.flags for v in verdicts) and any(v.resolved for v in verdicts)
