"""The local executor tells whatever verifier it holds when an attempt begins and when one ends
with nothing to verify, through the `Verifier` seam alone: it never asks which kind it holds."""

from __future__ import annotations

import time

from factory.agent.config import AgentConfig
from factory.executor.local import LocalExecutor
from factory.protocols import Verifier
from factory.records import AttemptKey, Exit, Task, Verdict
from tests.test_keeper import FIX_A, PlanPool, PlanSandbox, PlanTeacher

TASK = Task(instance_id="t", repo="r", problem_statement="", image="none")


class PatchOrNothing(PlanPool):
    """Attempt 0 leaves a fix, attempt 1 leaves the work dir as it found it."""

    async def acquire(self, image, start, *, workdir: str, attempt_id: str, rewrite=None, terminal=None) -> PlanSandbox:
        return PlanSandbox(("once", FIX_A if attempt_id.endswith(".0") else ""))


class Told(Verifier):
    """Starts nothing ahead; notes what it is told."""

    def __init__(self):
        self.told: list[str] = []

    async def verify(self, task: Task, patch: str, state: str | None = None) -> Verdict:
        return Verdict(resolved=True)

    def expect(self, task: Task) -> None:
        self.told.append(f"expect {task.instance_id}")

    def unexpect(self, task: Task) -> None:
        self.told.append(f"unexpect {task.instance_id}")


class Plain(Verifier):
    """Keeps the protocol's no-ops."""

    async def verify(self, task: Task, patch: str, state: str | None = None) -> Verdict:
        return Verdict(resolved=True)


async def sample(verifier: Verifier | None, index: int):
    executor = LocalExecutor(PatchOrNothing(), verifier, {"actor": PlanTeacher()}, AgentConfig())
    key = AttemptKey(run_id="r", instance_id=TASK.instance_id, teacher="actor", index=index)
    return (await executor.sample(TASK, key, seed=index, deadline=time.monotonic() + 60)).trajectory


async def test_an_attempt_with_nothing_to_verify_takes_back_what_it_told_the_verifier():
    verifier = Told()
    fixed = await sample(verifier, 0)
    assert fixed.patch and verifier.told == ["expect t"]  # its verification follows
    unchanged = await sample(verifier, 1)
    assert unchanged.exit == Exit.submitted and not unchanged.patch
    assert verifier.told == ["expect t", "expect t", "unexpect t"]


async def test_a_verifier_that_starts_nothing_ahead_and_a_node_without_one_sample_alike():
    with_plain, without = await sample(Plain(), 1), await sample(None, 1)
    assert (with_plain.exit, with_plain.patch) == (without.exit, without.patch) == (Exit.submitted, "")
