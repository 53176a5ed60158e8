"""Load on a SWE-smith-layout image: root only, bytecode on, a conda env (tests/swesmith_layout.py).

`factory run` (the real command, in a subprocess) runs 30 attempts of the scripted teacher
(solve: 1.0) at 16 in flight, while a second `factory run` with another run id works the same
engine and `factory clean` runs in the middle. Every attempt of both runs must be there, with a
verdict that resolves it, no infrastructure failure or retry, and only the fix in its patch.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import duckdb
import pytest

from factory.run.folder import RunStore
from factory.sandbox.docker import engine
from factory.tasks.patches import touched_files
from tests.swesmith_layout import ensure_image, scripted_solver, write_pipeline, write_taskset

pytestmark = pytest.mark.docker
ROOT = Path(__file__).parent.parent

FACTS = r"""
facts() {
  echo "users=$(awk -F: '$3 >= 1000 && $3 != 65534 {print $1}' /etc/passwd | tr '\n' ' ')"
  echo "uid1000=$(getent passwd 1000; getent group 1000; find / -xdev \( -uid 1000 -o -gid 1000 \) -print -quit 2>/dev/null)"
  echo "whoami=$(id -un)"
  echo "gitignore=$(ls /testbed/.gitignore 2>/dev/null)"
  echo "pycache=$(find /testbed -name '*.pyc' -print -quit)"
  echo "egginfo=$(ls -d /testbed/*.egg-info 2>/dev/null)"
  echo "dont_write_bytecode=$(python3 -c 'import sys; print(sys.flags.dont_write_bytecode)')"
  source /opt/miniconda3/bin/activate && conda activate testbed
  echo "python=$(command -v python) $(command -v python3)"
  echo "import=$(cd / && python -I -c 'import semverkit; print(semverkit.__file__)')"
}
facts 2>&1
"""


@pytest.fixture(scope="module")
def swesmith_image(docker_client) -> str:
    return ensure_image()


def test_the_fixture_image_has_the_swesmith_layout(swesmith_image, docker_client):
    out = docker_client.containers.run(
        swesmith_image, ["bash", "-c", FACTS], remove=True, network_mode="none",
        labels=engine.labels("swesmith-layout-check", uuid.uuid4().hex[:8]),
    ).decode()
    facts = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    assert facts["users"].strip() == "" and facts["uid1000"] == "" and facts["whoami"] == "root", out
    assert facts["gitignore"] == "", out
    assert facts["pycache"] and facts["egginfo"] and facts["dont_write_bytecode"] == "0", out
    env = "/opt/miniconda3/envs/testbed/bin"
    assert facts["python"] == f"{env}/python {env}/python3", out
    assert facts["import"] == "/testbed/semverkit/__init__.py", out


def start(args: list[str], log: Path) -> subprocess.Popen:
    """`factory ARGS` as a subprocess; its output goes to files (a full pipe would block it)."""
    out, err = log.with_suffix(".out").open("w"), log.with_suffix(".err").open("w")
    return subprocess.Popen([sys.executable, "-m", "factory.cli", *args], cwd=ROOT, stdout=out, stderr=err, text=True)


def logs(log: Path) -> str:
    return "\n".join(p.read_text()[-3000:] for p in (log.with_suffix(".out"), log.with_suffix(".err")) if p.exists())


def problems(store: RunStore, expected: set[tuple[str, str, int]], fixes: dict[str, set[str]]) -> list[str]:
    """Everything wrong with a finished run whose attempts should all have resolved; [] when none.

    Each problem once, with how many attempts have it and one of them."""
    files = {(a.key.instance_id, a.key.teacher, a.key.index): a for a in store.attempts()}
    with duckdb.connect(str(store.warehouse_path), read_only=True) as db:
        rows = db.execute(
            "select instance_id, teacher, attempt_index, outcome, resolved, verdict_reason, verdict_detail, "
            "error_class, error, infra_failures from v_attempts where run_id = ?", [store.run_id]).fetchall()
    found: dict[str, list[tuple]] = {}

    def note(key: tuple, what: str) -> None:
        found.setdefault(what[:500], []).append(key)

    for key in sorted(expected - set(files)):
        note(key, "lost: no attempt file")
    for key in sorted(expected - {r[:3] for r in rows}):
        note(key, "lost: no warehouse row")
    for key in sorted({r[:3] for r in rows} - expected):
        note(key, "a warehouse row of no expected attempt")
    for row in sorted(rows):
        key, (outcome, resolved, reason, detail, error_class, error, infra) = row[:3], row[3:]
        if resolved is None:
            note(key, f"no verdict: {outcome}")
        elif not resolved:
            note(key, f"unresolved: {reason}: {detail}")
        if error_class:
            note(key, f"error_class {error_class}: {error}")
        for failure in infra or []:
            note(key, f"infrastructure failure (retried): {failure}")
    for key, attempt in sorted(files.items()):
        if attempt.trajectory is not None:
            extra = set(touched_files(attempt.trajectory.patch)) - fixes[key[0]]
            if extra:
                note(key, f"the patch touches more than the fix: {sorted(extra)}")
    return [f"{len(keys)}x {what} (e.g. {'/'.join(map(str, keys[0]))})" for what, keys in found.items()]


def wait_for(condition, deadline: float, procs: list[subprocess.Popen]) -> None:
    while not condition():
        if time.monotonic() > deadline or any(p.poll() not in (None, 0) for p in procs):
            return
        time.sleep(0.5)


def test_30_attempts_at_16_in_flight_beside_another_factory_and_a_clean_lose_nothing(
    tmp_path, swesmith_image, docker_client
):
    taskset = write_taskset(tmp_path / "taskset", swesmith_image)
    rows = [json.loads(line) for line in (taskset / "tasks.jsonl").read_text().splitlines()]
    fixes = {r["instance_id"]: set(touched_files(r["patch"])) for r in rows}
    assert len(rows) == 6 and not (taskset / "repos").exists()
    # unique ids: a run reaps containers of its own id, and other sessions may share the engine
    main_id, side_id = f"load-main-{uuid.uuid4().hex[:8]}", f"load-side-{uuid.uuid4().hex[:8]}"
    # turns slow enough that both runs are still at work when `factory clean` runs, on a loaded
    # machine too (the suite's other worker, other sessions): a fast main run finished first in CI
    main = write_pipeline(tmp_path / "main", taskset, scripted_solver(0.2), limit=6, attempts=5, in_flight=16)
    side = write_pipeline(tmp_path / "side", taskset, scripted_solver(1.0), limit=3, attempts=3, in_flight=3)
    main_store = RunStore(tmp_path / "main/runs" / main_id)
    side_store = RunStore(tmp_path / "side/runs" / side_id)

    def containers(run_id: str) -> list:
        return docker_client.containers.list(filters={"label": f"{engine.LABEL_RUN}={run_id}"})

    def done(store: RunStore) -> int:
        return len(list(store.attempts_dir.glob("*/*/*.json")))

    procs: list[subprocess.Popen] = []
    try:
        main_proc = start(["run", str(main), "--run-id", main_id, "--quiet"], tmp_path / "main/log")
        procs.append(main_proc)
        wait_for(lambda: containers(main_id), time.monotonic() + 120, procs)
        side_proc = start(["run", str(side), "--run-id", side_id, "--quiet"], tmp_path / "side/log")
        procs.append(side_proc)
        # `factory clean` (no flags) while both runs have sandboxes alive and attempts still to go
        wait_for(lambda: done(main_store) >= 6 and containers(side_id), time.monotonic() + 300, procs)
        during = {"main running": main_proc.poll() is None, "side running": side_proc.poll() is None,
                  "main done": done(main_store), "side containers": len(containers(side_id))}
        clean = subprocess.run([sys.executable, "-m", "factory.cli", "clean"], cwd=ROOT, capture_output=True,
                               text=True, timeout=300)
        main_rc, side_rc = main_proc.wait(timeout=600), side_proc.wait(timeout=600)
    finally:
        for proc in procs:
            proc.kill()
        for run_id in (main_id, side_id):
            engine.remove_containers(run_id=run_id, everything=True)

    # every problem at once: under load one fault often explains the others
    found = [] if clean.returncode == 0 else [f"factory clean exited {clean.returncode}: {clean.stderr[-1500:]}"]
    if not (during["main running"] and during["side running"]):
        found.append(f"factory clean did not run while both runs did: {during}")
    for name, rc, log in (("main run", main_rc, tmp_path / "main/log"), ("second run", side_rc, tmp_path / "side/log")):
        if rc != 0:
            found.append(f"{name}: factory run exited {rc}: {logs(log)}")
    ids = [r["instance_id"] for r in rows]
    main_keys = {(iid, "scripted", i) for iid in ids for i in range(5)}
    side_keys = {(iid, "scripted", i) for iid in ids[:3] for i in range(3)}
    found += [f"main run: {p}" for p in problems(main_store, main_keys, fixes)]
    found += [f"second run: {p}" for p in problems(side_store, side_keys, fixes)]
    assert not found, f"clean said {clean.stdout.strip()!r}; problems:\n" + "\n".join(found)
