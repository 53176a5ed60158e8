"""One definition of a kept run: the run stops a task exactly where the dataset's filter chain says.

The scheduler runs here on stand-ins (a pool of sandboxes that only answer, a teacher that acts
out the plan its sandbox gives it, a verifier that reads the patch), so its policy is tested
without Docker; the filters are the real ones.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from factory.config import SamplingConfig, parse_pipeline
from factory.executor.local import LocalExecutor
from factory.filters import FilterChain, FiltersConfig
from factory.protocols import ExecResult, Verifier
from factory.records import Attempt, Completion, Message, Task, ToolCall, Verdict
from factory.run.allocation import Allocator
from factory.run.folder import RunStore
from factory.run.keeper import Keeper
from factory.run.parts import plan_of
from factory.run.progress import QuietProgress
from factory.run.runner import build_run
from factory.run.scheduler import Scheduler
from factory.verify.config import VerifierConfig
from tests.filters.attempt_builder import attempt, bash, distinct, patch_for, submit

FIX_A, FIX_B = patch_for("return 2"), patch_for("return 3")
PLANS = [  # what attempt i of every task does: (how it acts, its patch)
    ("once", "-wrong\n"),  # submits a patch that fixes nothing
    ("loop", FIX_A),  # the same command ten times, then submits
    ("endless", FIX_A),  # new commands until max_turns: resolved, never submitted
    ("once", FIX_A),
    ("once", FIX_A),  # the same fix again, another way
    ("once", FIX_B),
]


class PlanSandbox:
    """Answers every command with its plan; its diff is the plan's patch."""

    def __init__(self, plan: tuple[str, str]):
        self.workdir, self.closed = "/testbed", False
        self.plan, self.patch = plan

    async def exec(self, cmd: str, timeout: float | None = None, *, user: str | None = None) -> ExecResult:
        return ExecResult(0, self.plan)

    async def diff(self) -> str:
        return self.patch

    async def close(self) -> None:
        self.closed = True


class PlanPool:
    """Hands out sandboxes by the attempt's index (the end of its attempt id)."""

    def __init__(self):
        self.made: Counter[str] = Counter()

    def prewarm(self, image: str, workdir: str = "/testbed", count: int | None = None) -> None:
        pass

    async def acquire(self, image, start, *, workdir: str, attempt_id: str, rewrite=None, terminal=None) -> PlanSandbox:
        task, _, index = attempt_id.rpartition(".")
        self.made[task.rpartition(".")[0]] += 1
        return PlanSandbox(PLANS[int(index)])

    async def release(self, sandbox: PlanSandbox) -> None:
        await sandbox.close()

    def release_in_background(self, sandbox: PlanSandbox) -> None:
        asyncio.get_running_loop().create_task(self.release(sandbox))

    def done_with(self, image: str) -> None:
        pass


class PlanTeacher:
    """Reads its plan from the first command's output and acts it out."""

    name, model = "actor", "actor-1"

    def session(self, task: Task, seed: int) -> PlanTeacher:
        session = PlanTeacher()
        session.seed = seed
        return session

    async def complete(self, messages: list[Message], tools: list[dict]) -> Completion:
        outputs = [m.content for m in messages if m.role == "tool"]
        plan = outputs[0] if outputs else ""
        if not outputs:
            command = f"cat PLAN  # {self.seed}"  # every attempt's actions differ
        elif plan == "loop" and len(outputs) < 11:
            command = "python -m pytest -q"
        elif plan == "endless":
            command = f"echo {len(outputs)}"
        else:
            return Completion(message=Message(role="assistant", content="done"), cost_usd=0.0)
        call = ToolCall(id=f"c{len(outputs)}", name="bash", arguments=json.dumps({"command": command}))
        return Completion(message=Message(role="assistant", tool_calls=[call]), cost_usd=0.0)


class PatchVerifier(Verifier):
    async def verify(self, task: Task, patch: str) -> Verdict:
        return Verdict(resolved="return" in patch)


def pipeline(filters: dict, in_flight: int = 1):
    return parse_pipeline(f"""\
name: keeper
tasks: {{source: nowhere}}
teachers: [{{kind: scripted, model: scripted-actor, name: scripted-actor}}]
agent: {{max_turns: 14}}
sampling: {{attempts_per_task: {len(PLANS)}, max_in_flight: {in_flight}}}
filters: {json.dumps(filters)}
""")


async def run(tmp_path: Path, filters: dict, in_flight: int = 1):
    p = pipeline(filters, in_flight)
    tasks = [Task(instance_id=f"t{i}", repo="r", problem_statement="", image="none") for i in range(2)]
    store = RunStore(tmp_path / "run")
    store.start("", "test", "test")
    pool = PlanPool()
    teachers = {"scripted-actor": PlanTeacher()}
    result = await Scheduler(plan_of(p), tasks, teachers, store, executor=LocalExecutor(pool, PatchVerifier(), teachers, p.agent),
                             progress=QuietProgress()).run()
    return p, result, pool, store, tasks


SETTINGS = {
    "defaults": {},
    "loops off": {"loops": {"enabled": False}},
    "dedup by patch": {"dedup": {"by": "patch"}},
    "dedup by trajectory": {"dedup": {"by": "trajectory"}},
    "cap 1": {"cap": {"per_task": 1}},
    "cap 3": {"cap": {"per_task": 3}},
    "require_submitted off": {"resolved": {"require_submitted": False}},
    "cap off": {"cap": {"enabled": False}},
}


@pytest.mark.parametrize("name", list(SETTINGS))
async def test_the_run_keeps_what_the_dataset_keeps_and_stops_where_it_has_enough(name, tmp_path):
    p, result, pool, store, tasks = await run(tmp_path, SETTINGS[name])
    chain = FilterChain.from_config(p.filters)
    assert result.kept == len(chain.run(result.attempts).kept)
    assert build_run(p, store, store.attempts(), tasks, None).rows == result.kept  # `factory build`, its settings
    cap = p.filters.cap.per_task if p.filters.cap.enabled else None
    full = [t for t in ("t0", "t1") if cap is not None and len(chain.run(
        [a for a in result.attempts if a.key.instance_id == t]).kept) == cap]
    assert (result.cap, result.at_cap, result.not_needed) == (cap, len(full), sum(len(PLANS) - pool.made[t] for t in full))
    for task in ("t0", "t1"):
        made = sorted((a for a in result.attempts if a.key.instance_id == task), key=lambda a: a.key.index)
        assert [a.key.index for a in made] == list(range(len(made))) and pool.made[task] == len(made)
        kept = len(chain.run(made).kept)
        before_last = len(chain.run(made[:-1]).kept)
        if len(made) < len(PLANS):  # it stopped early: exactly when the cap was reached
            assert cap is not None and kept == cap and before_last < cap
        else:
            assert cap is None or before_last < cap


async def test_each_setting_changes_what_is_kept_and_so_when_sampling_stops(tmp_path):
    made = {}
    for name in ("defaults", "loops off", "dedup by patch", "cap 1", "require_submitted off", "cap off"):
        _, result, pool, _, _ = await run(tmp_path / name.replace(" ", "_"), SETTINGS[name])
        made[name] = (pool.made["t0"], result.kept // 2)
    # (attempts made of a task, rows kept of it); attempts #0 to #5 follow PLANS
    assert made["defaults"] == (6, 3)  # #1 loops, #2 never submits: #3, #4 (fix A another way), #5
    assert made["loops off"] == (5, 3)  # the looping #1 counts: the cap is reached at #4
    assert made["require_submitted off"] == (5, 3)  # the unsubmitted #2 counts
    assert made["dedup by patch"] == (6, 2)  # #4 repeats #3's fix: every attempt is made for two rows
    assert made["cap 1"] == (4, 1)
    assert made["cap off"] == (6, 3)


def test_attempts_in_flight_count_against_the_cap_and_a_turned_off_cap_never_stops():
    def told(filters: FiltersConfig) -> tuple[Keeper, Allocator, Callable[[Attempt], None]]:
        """A keeper and the allocator it tells its counts, as the scheduler wires them."""
        keeper, allocator = Keeper(filters), Allocator(SamplingConfig(), ["scripted-actor"], filters.cap.most)

        def add(a: Attempt) -> None:
            passed = keeper.add(a)
            allocator.record(a.key.instance_id, a.key.teacher, passed, len(keeper.kept(a.key.instance_id)))

        return keeper, allocator, add

    keeper, allocator, add = told(FiltersConfig.model_validate({"cap": {"per_task": 2}}))
    add(attempt(distinct(3, "a"), index=0, patch=FIX_A, instance_id="t-1"))
    assert allocator.needs("t-1") and allocator.needs("t-1", in_flight=0) and not allocator.needs("t-1", in_flight=1)
    add(attempt(distinct(3, "b"), index=1, patch=FIX_B, instance_id="t-1"))
    assert not allocator.needs("t-1") and allocator.needs("t-2") and keeper.total == 2
    uncapped, allocator, add = told(FiltersConfig.model_validate({"cap": {"enabled": False}}))
    for i in range(5):
        add(attempt(distinct(3, f"r{i}"), index=i, patch=FIX_A, instance_id="t-1"))
    assert allocator.needs("t-1", in_flight=100) and uncapped.total == 5


def test_an_attempt_the_per_attempt_filters_drop_is_no_success_and_not_kept():
    keeper = Keeper(FiltersConfig())
    looped = attempt([bash("pytest")] * 10 + [submit()], index=0, patch=FIX_A, instance_id="t-1")
    assert keeper.add(looped) is False and keeper.kept("t-1") == []
    assert keeper.add(attempt(distinct(3, "ok"), index=1, patch=FIX_A, instance_id="t-1")) is True
    assert [a.key.index for a in keeper.kept("t-1")] == [1]


class SlowVerifier(PatchVerifier):
    async def verify(self, task: Task, patch: str) -> Verdict:
        await asyncio.sleep(0.05)  # verification outlasts sampling, as it does with real tests
        return await super().verify(task, patch)


class Recording(QuietProgress):
    def __init__(self):
        super().__init__()
        self.most: Counter[str] = Counter()

    def update(self, attempt=None) -> None:
        for name, value in (("sampling", self.sampling), ("verifying", self.verifying),
                            ("open", self.sampling + self.verifying)):
            self.most[name] = max(self.most[name], value)


async def test_progress_holds_to_the_limit_and_carries_its_counts_across_a_resume(tmp_path):
    """Sampling never exceeds max_in_flight (attempts verifying have given their slot away),
    and a resumed run goes on counting from what it finished before."""
    p = pipeline(SETTINGS["cap off"], in_flight=2)
    tasks = [Task(instance_id=f"t{i}", repo="r", problem_statement="", image="none") for i in range(2)]
    store = RunStore(tmp_path / "run")
    store.start("", "test", "test")

    async def run_once() -> tuple[Recording, object]:
        progress = Recording()
        teachers = {"scripted-actor": PlanTeacher()}
        executor = LocalExecutor(PlanPool(), SlowVerifier(), teachers, p.agent)
        result = await Scheduler(plan_of(p), tasks, teachers, store, executor=executor, progress=progress).run()
        return progress, result

    first, result = await run_once()
    assert first.most["sampling"] == 2 and first.most["open"] > 2  # more open than slots: some verifying
    assert (first.sampling, first.verifying, first.done) == (0, 0, len(result.attempts))
    assert first.verified == sum(a.verdict is not None for a in result.attempts) > first.resolved > 0
    again, _ = await run_once()  # everything was done: the resumed run only counts
    assert (again.done, again.verified, again.resolved, again.kept) == (first.done, first.verified, first.resolved,
                                                                         first.kept)
    assert "of" in again.figures()["resolved"] and "verified" in again.figures()["resolved"]


class CountingVerifier(SlowVerifier):
    """Notes how many verifications run at once."""

    def __init__(self):
        self.now = self.most = 0

    async def verify(self, task: Task, patch: str) -> Verdict:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            return await super().verify(task, patch)
        finally:
            self.now -= 1


@pytest.mark.parametrize("limit", [1, 3])
async def test_verifications_at_once_follow_the_verifier_setting_not_the_sampling_limit(tmp_path, limit):
    p = pipeline(SETTINGS["cap off"], in_flight=8).model_copy(deep=True)
    p.verifier.max_concurrent = limit
    tasks = [Task(instance_id=f"t{i}", repo="r", problem_statement="", image="none") for i in range(4)]
    store = RunStore(tmp_path / "run")
    store.start("", "test", "test")
    verifier = CountingVerifier()
    teachers = {"scripted-actor": PlanTeacher()}
    result = await Scheduler(plan_of(p), tasks, teachers, store, executor=LocalExecutor(PlanPool(), verifier, teachers, p.agent)).run()
    assert verifier.most == limit  # reached, never passed: 8 in flight would have allowed 4 before
    assert all(a.verdict is not None for a in result.attempts)


def test_verifications_default_to_one_per_core():
    assert VerifierConfig().concurrency() == os.cpu_count()
