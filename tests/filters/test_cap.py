import random

from factory.filters import CapConfig, CapFilter, DropReason
from tests.filters.attempt_builder import attempt, distinct, patch_for


def cap(attempts, **config):
    return CapFilter(CapConfig(**config)).run(attempts)


def kept_indices(result):
    return sorted(a.key.index for a in result.kept)


def test_distinct_patches_are_picked_before_shorter_runs():
    attempts = [
        attempt(distinct(3), index=0, patch=patch_for("return 2")),
        attempt(distinct(2), index=1, patch=patch_for("return 2")),
        attempt(distinct(4), index=2, patch=patch_for("return 2")),
        attempt(distinct(20), index=3, patch=patch_for("return 3")),
        attempt(distinct(30), index=4, patch=patch_for("return 4")),
    ]
    result = cap(attempts)
    assert kept_indices(result) == [1, 3, 4]
    assert {d.reason for d in result.drops} == {DropReason.over_cap}
    assert result.drops[0].detail == "task has 5 runs; kept claude#1, claude#3, claude#4"


def test_distinct_teachers_come_next():
    attempts = [attempt(distinct(3 + i), teacher="claude", index=i, patch=patch_for(f"return {i}")) for i in range(3)]
    attempts.append(attempt(distinct(40), teacher="gpt", index=0, patch=patch_for("return 9")))
    result = cap(attempts, per_task=2)
    assert {(a.key.teacher, a.key.index) for a in result.kept} == {("claude", 0), ("gpt", 0)}


def test_then_shorter_runs():
    attempts = [attempt(distinct(10 - i), index=i, patch=patch_for(f"return {i}")) for i in range(5)]
    assert kept_indices(cap(attempts)) == [2, 3, 4]


def test_ties_are_seeded_and_do_not_depend_on_input_order():
    attempts = [attempt(distinct(5), index=i, patch=patch_for(f"return {i}")) for i in range(8)]
    first = kept_indices(cap(attempts, seed=1))
    shuffled = list(attempts)
    random.Random(3).shuffle(shuffled)
    assert kept_indices(cap(shuffled, seed=1)) == first
    seeds = {tuple(kept_indices(cap(attempts, seed=s))) for s in range(6)}
    assert len(seeds) > 1  # the seed matters


def test_each_task_is_capped_on_its_own():
    attempts = [attempt(instance_id=f"t-{t}", index=i, patch=patch_for(f"return {i}")) for t in range(2) for i in range(4)]
    result = cap(attempts, per_task=1)
    assert sorted(a.key.instance_id for a in result.kept) == ["t-0", "t-1"]
    assert len(result.drops) == 6


def test_a_task_within_the_cap_is_untouched():
    attempts = [attempt(index=i) for i in range(3)]
    assert cap(attempts).kept == attempts
