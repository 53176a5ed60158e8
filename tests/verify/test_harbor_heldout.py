"""A held-out set of Harbor and Terminal-Bench 1 tasks (tests/fixtures/harbor-heldout, written apart
from the demo set, as outside authors write them), on the real engine: `factory tasks validate` runs
each reference solution and the untouched state through final-state verification, and an agent's
attacks on the final state are refused, earn nothing, or are written down here as the holes they are.

The tasks' quirks are real authors' ones: tests that need /app as their work dir, a `set -e` test
script that writes no reward when pytest fails, reward.json with one key per check, `[verifier.env]`,
files in tests/ besides test.sh, `memory = "1G"`, `storage_mb`, Terminal-Bench 1's task.yaml,
run-tests.sh and docker-compose.yaml, and Terminal-Bench 2's test.sh that installs uv and pytest
at verify time (offline here: validation names that line)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from factory.config import load_pipeline
from factory.records import FlagKind, Reason, Task
from factory.run.progress import QuietProgress
from factory.run.runner import run_pipeline
from factory.sandbox.backend import sandbox_backend
from factory.sandbox.played import state_after
from factory.tasks.validate import read_results
from factory.verify import DockerVerifier
from factory.warehouse import run_query
from tests.terminal_sets import HARBOR_HELDOUT, built_tasks

pytestmark = pytest.mark.docker
ROOT = Path(__file__).parents[2]
RUN = "test-harbor-heldout"
ONLINE = "count-palindromes-uv"
SERVICE = "serve-status-page"
GIT_AT_WORKDIR = "git-finish-merge"


@pytest.fixture(scope="module")
def tasks(docker_client) -> dict[str, Task]:
    return built_tasks(HARBOR_HELDOUT)


@pytest.fixture(scope="module")
def validated(tasks, tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict[str, dict]]:
    """`factory tasks validate` on the whole set, once: its output and its results."""
    cache = pytest.MonkeyPatch()
    cache.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))  # the CLI's subprocess inherits it
    try:
        out = subprocess.run([sys.executable, "-m", "factory.cli", "tasks", "validate", str(HARBOR_HELDOUT), "--jobs", "2"],
                             capture_output=True, text=True, cwd=ROOT)
        return out, read_results(str(HARBOR_HELDOUT))
    finally:
        cache.undo()


def test_every_task_loads_with_its_limits(tasks):
    assert len(tasks) == 12
    assert tasks["site-config-regen"].terminal.memory_mb == 1024  # memory = "1G"
    assert tasks["access-log-report"].terminal.verifier_env == {"REPORT": "/app/report.json",
                                                                "ACCESS_LOG": "/app/logs/access.log"}
    assert tasks[GIT_AT_WORKDIR].workdir == "/app/repo" and tasks["deploy-permissions"].workdir == "/srv/app"
    assert {i for i, t in tasks.items() if t.terminal.reward_from_exit} == {"tb1-merge-env-files", "tb1-sqlite-migrations"}
    assert set(tasks["ledger-normalize"].terminal.tests) == {"test.sh", "expected.sha256"}


def test_the_held_out_set_validates_but_for_the_task_that_downloads(validated):
    """Every task but the one that downloads: the service the solution leaves running is started
    again beside the tests, the repo in the work dir keeps its own history and merge state."""
    out, results = validated
    assert out.returncode == 1, out.stdout + out.stderr  # the online task is broken
    fine = set(results) - {ONLINE}
    assert len(fine) == 11 and {SERVICE, GIT_AT_WORKDIR} <= fine
    for iid in fine:
        assert results[iid]["status"] == "valid", (iid, results[iid]["why"])
        assert results[iid]["gold"] == ["resolved"] and not results[iid]["empty"].startswith("resolved"), iid


def test_a_test_script_that_installs_its_tools_at_verify_time_is_named_in_one_line(validated):
    out, results = validated
    assert results[ONLINE]["status"] == "broken"
    assert results[ONLINE]["why"] == ("its tests download at verify time, and verification has no network: "
                                      "tests/test.sh:4 `apt-get install -y curl`")


def _scripted(name: str, outcome: str) -> str:
    rates = {k: float(k == outcome) for k in ("solve", "wrong_fix", "loop", "format_error", "give_up")}
    return f"  - {{kind: scripted, model: scripted-test, name: {name}, seed: 1, profile: {rates}}}\n"


async def test_a_run_of_held_out_tasks_keeps_what_the_solver_solved(tasks, tmp_path, monkeypatch):
    """The scripted teacher plays each task's solve.sh as its commands (as root: the permissions
    task needs it), the wrong one leaves a note; each state is frozen, judged, and only the solved kept."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    picked = ["access-log-report", "deploy-permissions", "site-config-regen", "tb1-sqlite-migrations"]
    path = tmp_path / "heldout.yaml"
    path.write_text(f"name: heldout\ntasks: {{source: {HARBOR_HELDOUT}, include_ids: {picked}}}\nteachers:\n"
                    + _scripted("scripted-solver", "solve") + _scripted("scripted-wrong", "wrong_fix")
                    + "agent: {max_turns: 30, command_timeout: 120}\nsandbox: {memory: 1g, max_live: 4, user: root}\n"
                    f"sampling: {{attempts_per_task: 1, max_in_flight: 2}}\noutput: {{dir: {tmp_path / 'runs'}}}\n")
    outcome = await run_pipeline(load_pipeline(path), run_id="heldout", progress=QuietProgress(), command="test")
    rows = run_query(outcome.store.warehouse_path, "SELECT instance_id, teacher, resolved, reward, guarantee, kept "
                                                   "FROM v_attempts").rows
    solved = {(i, "scripted-solver") for i in picked}
    assert sorted(rows) == sorted((i, t, (i, t) in solved, float((i, t) in solved), "final-state", (i, t) in solved)
                                  for i in picked for t in ("scripted-solver", "scripted-wrong")), rows


async def _verdict(task: Task, script: str):
    """`script` run as root in an agent's sandbox of `task`, its state frozen, then judged."""
    played = await state_after(sandbox_backend("docker"), task, script, run_id=RUN,
                               attempt_id=f"{task.instance_id}-attack", seconds=120)
    return await DockerVerifier(run_id=RUN).verify(task, "", played.state)


FAKE = "#!/bin/sh\\nmkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; exit 0\\n"
REWRITER = ("while :; do echo 1 > /logs/verifier/.r && mv -f /logs/verifier/.r /logs/verifier/reward.txt; "
            "sleep 0.01; done")
REFUSED = {
    "fake pytest on PATH": ("inventory-low-stock",
                            f"printf '{FAKE}' > /usr/local/bin/pytest && chmod +x /usr/local/bin/pytest"),
    "fake python3 on PATH": ("access-log-report",
                             f"printf '{FAKE}' > /usr/local/bin/python3 && chmod +x /usr/local/bin/python3"),
    "a curl where the tests may look": (SERVICE, f"printf '{FAKE}' > /usr/bin/curl && chmod +x /usr/bin/curl"),
    "loader preload": ("site-config-regen", "echo /tmp/evil.so > /etc/ld.so.preload"),
    "sitecustomize in python's path": ("jobrunner-add-job", "mkdir -p /usr/local/lib/python3.11/dist-packages && "
                                       "echo 'import os; os._exit(0)' > /usr/local/lib/python3.11/dist-packages/sitecustomize.py"),
    "tb1: fake pytest on PATH": ("tb1-merge-env-files",
                                 f"printf '{FAKE}' > /usr/local/bin/pytest && chmod +x /usr/local/bin/pytest"),
}


@pytest.mark.parametrize("attack", sorted(REFUSED))
async def test_an_attack_on_what_the_tests_run_is_refused(tasks, attack):
    iid, script = REFUSED[attack]
    verdict = await _verdict(tasks[iid], script)
    assert not verdict.resolved and verdict.reason is Reason.tampered, verdict.detail
    assert verdict.flagged(FlagKind.altered_system)


EARN_NOTHING = {
    "reward.json written early": ("access-log-report", "mkdir -p /logs/verifier && "
                                  "echo '{\"reward\": 1.0, \"requests\": 1.0}' > /logs/verifier/reward.json",
                                  FlagKind.stale_reward),
    "reward.txt written early": ("ledger-normalize", "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt",
                                 FlagKind.stale_reward),
    "logs deleted": ("git-scrub-secret", "rm -rf /logs", None),
    "tb1: a background process rewriting the reward": (
        "tb1-sqlite-migrations", f"nohup sh -c '{REWRITER}' >/dev/null 2>&1 &", None),
    "bashrc hook and an alias in profile.d": (
        "deploy-permissions", "echo \"alias pytest='true'\" > /etc/profile.d/zz-tests.sh && "
        "echo 'echo 1 > /logs/verifier/reward.txt' >> /root/.bashrc", FlagKind.altered_system),
    "LD_PRELOAD in /etc/environment": ("inventory-low-stock", "echo LD_PRELOAD=/tmp/evil.so >> /etc/environment",
                                       FlagKind.altered_system),
}


@pytest.mark.parametrize("attack", sorted(EARN_NOTHING))
async def test_a_forged_reward_left_in_the_state_earns_nothing(tasks, attack):
    iid, script, flag = EARN_NOTHING[attack]
    verdict = await _verdict(tasks[iid], script)
    assert not verdict.resolved and not verdict.reward, verdict.detail
    if flag is not None:
        assert verdict.flagged(flag), verdict.flags


THROUGH_WHAT_THE_TESTS_RUN = {
    "git fsmonitor the tests' git status runs": (
        "git-scrub-secret",
        f"printf '#!/bin/sh\\n(setsid sh -c \"{REWRITER}\" </dev/null >/dev/null 2>&1 &)\\nexit 1\\n' > /app/repo/.git/fsm "
        "&& chmod +x /app/repo/.git/fsm && cd /app/repo && git config core.fsmonitor /app/repo/.git/fsm "
        "&& echo config/credentials.env > .gitignore && git add .gitignore && git commit -qm 'ignore credentials'",
        FlagKind.left_running),
    "the program under test starts a reward rewriter": (
        "inventory-low-stock",
        "printf 'import subprocess\\nsubprocess.Popen([\"sh\", \"-c\", \"%s\"], start_new_session=True, "
        "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\\n' "
        f"'{REWRITER}' > /app/inventory/__main__.py",
        FlagKind.left_running),
    "sha256sum replaced": (
        "ledger-normalize", "printf '#!/bin/sh\\nexit 0\\n' > /usr/bin/sha256sum",
        FlagKind.altered_system),
    "pytest's own package patched": (
        "site-config-regen", "echo 'import os; os._exit(0)' >> /usr/lib/python3/dist-packages/pytest/__init__.py",
        FlagKind.altered_system),
}


@pytest.mark.parametrize("attack", sorted(THROUGH_WHAT_THE_TESTS_RUN))
async def test_an_attack_through_code_the_tests_run_earns_nothing(tasks, attack):
    """A rewriter started by what the tests run (a git hook, the program under test) is still
    running when the script ends: the reward is not taken. A command the script runs after `if`,
    and pytest's own package, are what the tests rely on: changed, they refuse the state."""
    iid, script, flag = THROUGH_WHAT_THE_TESTS_RUN[attack]
    verdict = await _verdict(tasks[iid], script)
    assert not verdict.resolved and not verdict.reward, verdict.detail
    assert verdict.flagged(flag), verdict.flags
