"""Final-state verification of terminal tasks on the real engine: a solution earns the reward,
doing nothing does not, and every way of forging the reward from the final state is refused or
named in the verdict."""


import pytest

from factory.records import FlagKind, Guarantee, Reason, Task
from factory.sandbox.backend import sandbox_backend
from factory.sandbox.played import state_after
from factory.verify import DockerVerifier
from tests.terminal_sets import DEMO_TERMINAL, built_tasks

RUN = "test-final-state"


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    return built_tasks(DEMO_TERMINAL)


async def _final_state(task: Task, script: str) -> str:
    """`script` run as root in an agent's sandbox of `task`, then its state frozen."""
    played = await state_after(sandbox_backend("docker"), task, script, run_id=RUN,
                               attempt_id=f"{task.instance_id}-attempt", seconds=120)
    assert not played.failed, played.failed
    return played.state


async def _verdict(task: Task, script: str):
    return await DockerVerifier(run_id=RUN).verify(task, "", await _final_state(task, script))


@pytest.mark.parametrize("name", ["repair-json", "build-zipapp", "configure-service", "summarize-sales",
                                  "recover-branch", "fix-rotate-script", "serve-status"])
async def test_the_solution_earns_the_reward_and_nothing_does_not(tasks, name):
    task = tasks[name]
    solved = await _verdict(task, task.terminal.solution["solve.sh"])
    assert solved.resolved and solved.reward == 1.0 and solved.guarantee is Guarantee.final_state, solved.detail
    idle = await _verdict(task, "")
    assert not idle.resolved and idle.reward == 0.0 and idle.reason is Reason.tests_failed


FAKE = "#!/bin/sh\nmkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; exit 0\n"
ATTACKS = {
    "fake bash on PATH": f"printf '{FAKE}' > /usr/local/bin/bash && chmod +x /usr/local/bin/bash",
    "fake python on PATH": f"printf '{FAKE}' > /usr/local/bin/python3 && chmod +x /usr/local/bin/python3",
    "fake pytest on PATH": f"printf '{FAKE}' > /usr/local/bin/pytest && chmod +x /usr/local/bin/pytest",
    "bash replaced": f"printf '{FAKE}' > /tmp/b && chmod +x /tmp/b && mv /tmp/b /usr/bin/bash",
    "python replaced": f"printf '{FAKE}' > /tmp/p && chmod +x /tmp/p && mv /tmp/p /usr/bin/python3.11",
    "loader preload": "echo /tmp/evil.so > /etc/ld.so.preload",
    "python start-up hook": "echo 'import os' > /usr/lib/python3/dist-packages/evil.pth",
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
async def test_a_state_that_replaces_what_the_tests_rely_on_is_refused(tasks, attack):
    verdict = await _verdict(tasks["repair-json"], ATTACKS[attack])
    assert not verdict.resolved and verdict.reason is Reason.tampered
    assert verdict.flagged(FlagKind.altered_system) and verdict.guarantee is Guarantee.final_state


HOOK = "echo 1 > /logs/verifier/reward.txt"
NAMED = {
    "reward written early": ("mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt", FlagKind.stale_reward),
    "logs deleted": ("rm -rf /logs", None),
    "bashrc and profile hooks": (f"echo '{HOOK}' >> /root/.bashrc && echo '{HOOK}' >> /etc/profile "
                                 f"&& echo '{HOOK}' >> /etc/bash.bashrc", FlagKind.altered_system),
    "an alias": ("echo \"alias python3='echo passed; true'\" >> /root/.bashrc", FlagKind.altered_system),
    "LD_PRELOAD in the environment": ("echo LD_PRELOAD=/tmp/evil.so >> /etc/environment "
                                      "&& echo 'export LD_PRELOAD=/tmp/evil.so BASH_ENV=/tmp/x' >> /etc/profile",
                                      FlagKind.altered_system),
    "a background process rewriting the reward": (
        "nohup sh -c 'while true; do mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; sleep 0.1; done' "
        ">/dev/null 2>&1 &", None),
}


@pytest.mark.parametrize("attack", sorted(NAMED))
async def test_a_forged_reward_in_the_final_state_earns_nothing(tasks, attack):
    script, flag = NAMED[attack]
    verdict = await _verdict(tasks["repair-json"], script)
    assert not verdict.resolved and verdict.reward == 0.0, verdict.detail
    if flag is not None:
        assert verdict.flagged(flag)


async def test_a_task_without_a_frozen_state_is_not_resolved(tasks):
    verdict = await DockerVerifier(run_id=RUN).verify(tasks["repair-json"], "")
    assert not verdict.resolved and verdict.reason is Reason.no_report and verdict.guarantee is Guarantee.final_state
