"""`executor: {kind: ray}` on a real two-node Ray cluster on loopback (both nodes use this
machine's Docker engine; the code does not rely on that): the same attempts as a local run,
a node killed mid-run, the driver killed with kill -9, and paid turns journaled on the driver.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import duckdb
import pytest

from factory.run.folder import RunStore
from tests.executor.ray_cluster import Cluster
from tests.test_run import (
    factory,
    journal_a_paid_turn,
    kill_9_then_resume,
    outcomes,
    paid_pipeline,
    pipeline_file,
    run,
    warehouse_keys,
)

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def cluster():
    cluster = Cluster()
    try:
        cluster.add_node(2, head=True)
        cluster.add_node(2)
        yield cluster
    finally:
        cluster.stop()


def on_ray(path: Path, address: str) -> Path:
    path.write_text(path.read_text() + f"executor:\n  kind: ray\n  address: {address}\n")
    return path


def behaviour(store: RunStore) -> dict[tuple, tuple]:
    """What an attempt did, as far as the teacher and the verifier decide it (tool outputs
    carry the sandbox's clock, as in `ls -l`, so only their count is compared)."""
    return {
        (a.key.instance_id, a.key.teacher, a.key.index): (
            [(m.content, [(c.name, c.arguments) for c in m.tool_calls]) for m in a.trajectory.messages
             if m.role == "assistant"],
            len(a.trajectory.messages), a.trajectory.patch, a.trajectory.exit,
            a.verdict.resolved if a.verdict else None, a.verdict.reason if a.verdict else None,
        )
        for a in store.attempts()
    }


def nodes(store: RunStore) -> list[str | None]:
    with duckdb.connect(str(store.warehouse_path), read_only=True) as db:
        return [n for (n,) in db.execute("select node from v_attempts").fetchall()]


async def test_a_ray_run_makes_the_same_attempts_as_a_local_run(tmp_path, docker_client, cluster):
    profile = "{solve: 0.5, wrong_fix: 0.3, give_up: 0.2}"
    local = await run(pipeline_file(tmp_path, tasks=2, attempts=2, stop=5, in_flight=4, profile=profile), "local")
    ray = await run(on_ray(pipeline_file(tmp_path, tasks=2, attempts=2, stop=5, in_flight=4, profile=profile),
                           cluster.address), "ray")
    assert len(behaviour(ray.store)) == 4
    assert behaviour(ray.store) == behaviour(local.store)
    assert ray.build is not None and ray.build.rows == local.build.rows
    on = nodes(ray.store)
    assert None not in on and len(set(on)) == 2  # spread over both nodes, each one named
    assert set(on) == {n["NodeID"] for n in cluster.alive()}
    assert len(set(nodes(local.store))) == 1  # a local run names this machine


async def test_a_node_killed_mid_run_loses_and_duplicates_nothing(tmp_path, docker_client, cluster):
    victim = cluster.add_node(2)
    path = on_ray(pipeline_file(tmp_path, tasks=3, attempts=2, stop=5, in_flight=6, latency=0.5), cluster.address)
    killed, ended = threading.Event(), threading.Event()

    def kill_once_it_holds_an_attempt() -> None:
        while not ended.is_set():
            for c in docker_client.api.containers(filters={"label": "factory.run=noded"}):
                if cluster.holds(victim, int(c["Labels"]["factory.pid"])):
                    time.sleep(1.0)  # mid-attempt: its agent is past the start
                    cluster.kill(victim)
                    killed.set()
                    return
            time.sleep(0.2)

    killer = threading.Thread(target=kill_once_it_holds_an_attempt)
    killer.start()
    try:
        outcome = await run(path, "noded")
    finally:
        ended.set()
        killer.join()
    assert killed.is_set()
    store = outcome.store
    assert len(outcomes(store)) == 6 and all(a.error_class is None for a in store.attempts())
    keys = warehouse_keys(store)
    assert len(keys) == len(set(keys)) == 6
    lost = [a for a in store.attempts() if any("NodeLost" in f for f in a.infra_failures)]
    assert lost  # recorded as infrastructure, and redone on a node still alive
    for attempt in lost:
        dead = re.search(r"node ID: ([0-9a-f]+)", " ".join(attempt.infra_failures))
        assert attempt.node is not None and (dead is None or attempt.node != dead.group(1))
    assert docker_client.api.containers(all=True, filters={"label": "factory.run=noded"}) == []  # reaped
    cluster.nodes.remove(victim)
    cluster.wait_for(2)


def test_the_driver_killed_with_kill_9_resumes_and_loses_and_duplicates_nothing(tmp_path, docker_client, cluster):
    path = on_ray(pipeline_file(tmp_path, tasks=3, attempts=2, stop=5, in_flight=2, latency=0.3), cluster.address)
    store, _ = kill_9_then_resume(path, "driverkill", docker_client)
    assert None not in nodes(store)


async def test_paid_turns_of_an_attempt_on_a_node_are_journaled_by_the_driver(tmp_path, docker_client, cluster):
    """A kill left one paid turn in the journal: the attempt, redone on a node, replays it (only
    the next turn reaches the API), and the key never travels to the node."""
    from tests.teachers.fake_api import FakeAPI, openai_completion

    with FakeAPI() as api:
        api.openai(openai_completion(tool_calls=[{"name": "submit", "arguments": {}}]))
        path = on_ray(paid_pipeline(tmp_path, api.openai_url, attempts=1), cluster.address)
        store, key = journal_a_paid_turn(path, "replay")
        outcome = await run(path, "replay")
        assert len(api.requests) == 1
    [attempt] = outcome.store.attempts()
    assert attempt.trajectory.exit == "submitted" and attempt.node is not None
    assert attempt.trajectory.messages[2].content == "Looking around."
    assert "README.md" in attempt.trajectory.messages[3].content  # its tool call ran again, on the node
    assert attempt.trajectory.cost_usd == pytest.approx(0.00208 + attempt.trajectory.turns[-1].cost_usd)
    assert not store.journal_path(key).exists()


def test_a_bad_executor_setting_is_one_line_naming_the_field(tmp_path):
    path = pipeline_file(tmp_path)
    path.write_text(path.read_text() + "executor:\n  kind: slurm\n")
    proc = factory("run", str(path))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert err.strip().startswith("factory: ") and "executor.kind" in err and len(err.strip().splitlines()) == 1

