"""Adaptive allocation: the Beta posterior, hopeless teachers, tiers of a cascade, value per dollar,
and the scheduler that records each decision and makes the same ones again on resume."""

from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest

from factory.config import SamplingConfig, parse_pipeline
from factory.errors import ConfigError
from factory.executor.local import LocalExecutor
from factory.records import Task
from factory.run.allocation import NOT_ESCALATED, Allocator, Stop, beta_cdf
from factory.run.folder import RunStore
from factory.run.parts import plan_of
from factory.run.progress import QuietProgress
from factory.run.scheduler import Scheduler
from factory.warehouse import Warehouse
from tests.test_keeper import PatchVerifier, PlanPool, PlanTeacher


@pytest.mark.parametrize("x, a, b, expected", [
    (0.3, 1.0, 4.0, 1 - 0.7**4), (0.3, 4.0, 1.0, 0.3**4), (0.5, 2.5, 2.5, 0.5), (0.9, 1.0, 1.0, 0.9),
    (0.05, 0.25, 0.65, None),
])
def test_the_beta_cdf_matches_closed_forms_and_grows_with_x(x, a, b, expected):
    value = beta_cdf(x, a, b)
    if expected is not None:
        assert math.isclose(value, expected, rel_tol=1e-9)
    assert 0 < value < 1 and beta_cdf(x * 0.9, a, b) < value < beta_cdf(min(x * 1.1, 0.999), a, b)


@dataclass(frozen=True)
class U:
    task_id: str
    teacher: str
    index: int = 0


def queue_of(tasks: list[str], teachers: list[str], attempts: int) -> deque[U]:
    return deque(U(t, teacher, i) for i in range(attempts) for t in tasks for teacher in teachers)


def fail(allocator: Allocator, task: str, teacher: str, times: int, kept: int = 0) -> None:
    for _ in range(times):
        allocator.record(task, teacher, False, kept)


def test_a_teacher_that_only_fails_is_hopeless_after_four_and_a_pass_anywhere_keeps_it_going():
    allocator = Allocator(SamplingConfig(attempts_per_task=10), ["a", "b"], wanted=3)
    fail(allocator, "t", "a", 3)
    assert allocator.stopped("t") is None and not allocator.tasks["t"].beliefs["a"].hopeless
    fail(allocator, "t", "a", 1)
    assert allocator.tasks["t"].beliefs["a"].hopeless and allocator.stopped("t") is None  # b may still try
    fail(allocator, "t", "b", 4)
    assert allocator.stopped("t") is Stop.hopeless
    assert [d.decision for d in allocator.decisions] == ["hopeless"] and allocator.decisions[0].attempts == 8
    allocator.record("u", "b", True, 1)
    fail(allocator, "u", "a", 9, kept=1)
    assert allocator.stopped("u") is None and not allocator.tasks["u"].beliefs["a"].hopeless


def test_units_of_stopped_tasks_and_hopeless_teachers_leave_the_queue_as_saved():
    allocator = Allocator(SamplingConfig(attempts_per_task=6), ["a"], wanted=1)
    queue = queue_of(["t", "u"], ["a"], 6)
    fail(allocator, "t", "a", 4)
    allocator.record("u", "a", True, 1)
    assert allocator.pick(queue) is None and not queue
    assert allocator.saved == {Stop.hopeless: 6, Stop.at_cap: 6}
    assert {d.task: d.decision for d in allocator.decisions} == {"t": "hopeless", "u": "at_cap"}


def test_hopeless_turned_off_never_stops_a_task():
    allocator = Allocator(SamplingConfig(attempts_per_task=50, hopeless={"enabled": False}), ["a"], wanted=3)
    fail(allocator, "t", "a", 40)
    assert allocator.stopped("t") is None and allocator.pick(queue_of(["t"], ["a"], 1)) == U("t", "a")


def test_give_up_stops_after_the_streak_and_bets_no_more_than_it_allows():
    allocator = Allocator(SamplingConfig(attempts_per_task=6, give_up_after_failures=2,
                                         hopeless={"enabled": False}), ["a"], wanted=3)
    queue = queue_of(["t"], ["a"], 6)
    first = allocator.pick(queue)
    allocator.launched("t", "a")
    second = allocator.pick(queue)
    allocator.launched("t", "a")
    assert (first.index, second.index) == (0, 1) and allocator.pick(queue) is None  # two bet, none left
    for _ in range(2):
        allocator.ended("t", "a")
        allocator.record("t", "a", False, 0)
    assert allocator.stopped("t") is Stop.gave_up and allocator.pick(queue) is None and not queue


def test_a_cascade_opens_the_next_tier_only_after_the_first_failed_the_task():
    sampling = SamplingConfig(attempts_per_task=4, tiers=[["cheap"], ["dear"]], escalate_after=2)
    allocator = Allocator(sampling, ["cheap", "dear"], wanted=1)
    queue = queue_of(["hard", "easy"], ["cheap", "dear"], 4)
    picked = []
    while (unit := allocator.pick(queue)) is not None:
        picked.append((unit.task_id, unit.teacher))
        passed = unit.task_id == "easy" or unit.teacher == "dear"
        allocator.record(unit.task_id, unit.teacher, passed, int(passed))
    assert picked == [("hard", "cheap"), ("easy", "cheap"), ("hard", "cheap"), ("hard", "dear")]
    assert [(d.task, d.decision, d.tier) for d in allocator.decisions] == [
        ("easy", "at_cap", 1), ("easy", NOT_ESCALATED, 1), ("hard", "escalated", 2), ("hard", "at_cap", 2)]
    # never made: easy's 3 cheap (cap) and 4 dear (the cascade), hard's 2 cheap and 3 dear (cap)
    assert allocator.saved == {Stop.at_cap: 8, NOT_ESCALATED: 4}
    assert {(r["instance_id"], r["decision"]): r["saved"] for r in allocator.rows("r")} == {
        ("easy", "at_cap"): 3, ("easy", NOT_ESCALATED): 4, ("hard", "escalated"): 0, ("hard", "at_cap"): 5}


def test_under_a_budget_the_next_attempt_goes_where_kept_rows_are_cheapest():
    allocator = Allocator(SamplingConfig(attempts_per_task=6), ["cheap", "dear"], wanted=3)
    allocator.record("solid", "dear", True, 1)
    fail(allocator, "shaky", "cheap", 2)
    queue = deque([U("shaky", "cheap"), U("solid", "dear"), U("solid", "cheap")])
    prices = {"cheap": 0.1, "dear": 1.0}
    assert allocator.pick(queue, prices.__getitem__) == U("solid", "cheap")
    assert allocator.pick(queue, {"cheap": 1.0, "dear": 0.1}.__getitem__) == U("solid", "dear")
    assert allocator.pick(deque(queue)) == U("shaky", "cheap")  # no budget: queue order


TIERS = """\
name: cascade
tasks: {source: nowhere}
teachers: [{kind: scripted, name: scripted-cheap}, {kind: scripted, name: scripted-dear}]
sampling: {attempts_per_task: 6, max_in_flight: 1, tiers: [[scripted-cheap], [scripted-dear]]}
"""


@pytest.mark.parametrize("tiers, field, words", [
    ("[[scripted-cheap], [scripted-deer]]", "sampling.tiers[1][0]", "is no teacher"),
    ("[[scripted-cheap, scripted-dear], [scripted-dear]]", "sampling.tiers[1][0]", "in two tiers"),
    ("[[scripted-cheap]]", "sampling.tiers", "scripted-dear in no tier"),
    ("[[scripted-cheap], []]", "sampling.tiers[1]", "at least one teacher"),
])
def test_bad_tiers_name_the_field(tiers, field, words):
    with pytest.raises(ConfigError) as info:
        parse_pipeline(TIERS.replace("[[scripted-cheap], [scripted-dear]]", tiers), "p.yaml")
    assert info.value.field == field and words in info.value.message and str(info.value).startswith("p.yaml:4:")


class Cheap(PlanTeacher):
    name, model = "scripted-cheap", "scripted-cheap"


class LettingGo(PlanPool):
    """Counts when the scheduler lets an image go: once every unit of it ran or was dropped."""

    def __init__(self):
        super().__init__()
        self.let_go: list[str] = []

    def done_with(self, image: str) -> None:
        self.let_go.append(image)


async def run_cascade(tmp_path: Path, store: RunStore) -> tuple[Scheduler, object]:
    """Plans (test_keeper.PLANS) make attempts 0-2 fail, 3-5 pass; both teachers act them out."""
    p = parse_pipeline(TIERS)
    tasks = [Task(instance_id=f"t{i}", repo="r", problem_statement="", image="none") for i in range(2)]
    pool = LettingGo()
    with Warehouse(store.warehouse_path) as warehouse:
        teachers = {"scripted-cheap": Cheap(), "scripted-dear": PlanTeacher()}
        scheduler = Scheduler(plan_of(p), tasks, teachers, store, executor=LocalExecutor(pool, PatchVerifier(), teachers, p.agent),
                              progress=QuietProgress(), warehouse=warehouse)
        result = await scheduler.run()
        rows = warehouse.query("SELECT instance_id, decision, tier, attempts, saved FROM task_decisions "
                               "ORDER BY instance_id, decision").rows
    assert pool.let_go == ["none"]  # the units the allocator dropped count as settled too
    return scheduler, result, rows


async def test_the_scheduler_records_why_each_task_stopped_and_decides_the_same_on_resume(tmp_path):
    store = RunStore(tmp_path / "run")
    store.start("", "test", "test")
    scheduler, result, rows = await run_cascade(tmp_path, store)
    # cheap #0 wrong, #1 loops: tier 2 opens; then both teachers until the cap of 3 distinct runs
    by = {(r[0], r[1]): r for r in rows}
    assert by[("t0", "escalated")][2:4] == (2, 2) and by[("t0", "at_cap")][2] == 2
    assert result.saved == {Stop.at_cap: sum(r[4] for r in rows)} == {"at_cap": result.not_needed}
    assert result.kept == 6 and {a.key.teacher for a in result.attempts} == {"scripted-cheap", "scripted-dear"}
    saved = json.loads((store.folder / "allocation.json").read_text())
    assert saved["saved"] == result.saved and len(saved["decisions"]) == len(rows)
    # kill: the last attempts' files are gone; the resume redoes them and decides the same
    last = sorted(store.attempts(), key=lambda a: a.finished_at)[-3:]
    for attempt in last:
        store.attempt_path(attempt.key).unlink()
    again, result2, rows2 = await run_cascade(tmp_path, RunStore(tmp_path / "run"))
    assert rows2 == rows and result2.finished == 3 and result2.saved == result.saved
    assert again.allocator.decisions == scheduler.allocator.decisions


def test_the_example_in_the_allocation_page_prints_what_it_shows():
    from tests.docs_examples import run_examples

    assert run_examples("allocation.md") == 1
