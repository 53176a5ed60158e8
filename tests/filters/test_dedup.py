import random
import re

from factory.filters import DedupConfig, DedupFilter, DropReason
from tests.filters.attempt_builder import attempt, bash, distinct, patch_for, submit


def dedup(attempts, **config):
    return DedupFilter(DedupConfig(**config)).run(attempts)


def test_by_patch_patches_differing_only_in_whitespace_are_duplicates():
    a = attempt(distinct(5, "a"), index=0, patch=patch_for("return 2"))
    b = attempt(distinct(7, "b"), index=1, patch=patch_for("return   2  ").replace("    return", "\treturn"))
    assert dedup([a, b]).drops == []  # by trajectory (the default): one fix reached two ways is kept twice
    result = dedup([a, b], by="patch")
    assert result.kept == [a]
    (drop,) = result.drops
    assert (drop.key, drop.reason, drop.detail) == (b.key, DropReason.duplicate_patch, "same patch as claude#0")


def test_identical_action_sequences_are_duplicates_even_with_other_patches():
    steps = [bash("ls"), bash("python  fix.py"), submit()]
    a = attempt(steps, index=0, patch=patch_for("return 2"))
    b = attempt([bash("ls"), bash("python fix.py"), submit()], index=1, patch=patch_for("return 3"))
    (drop,) = dedup([b, a]).drops
    assert drop.key == b.key and drop.reason == DropReason.duplicate_actions


def test_of_duplicates_the_shorter_run_is_kept():
    long = attempt(distinct(9, "long"), teacher="aaa", index=0, patch=patch_for("return 2"))
    short = attempt(distinct(3, "short"), teacher="zzz", index=0, patch=patch_for("return 2"))
    result = dedup([long, short], by="patch")
    assert result.kept == [short]


def test_near_duplicates_by_minhash_with_a_threshold():
    base = distinct(30)
    changed = list(base)
    changed[15] = bash("something else")
    a = attempt(base, index=0, patch=patch_for("return 2"))
    b = attempt(changed, index=1, patch=patch_for("return 3"))
    (drop,) = dedup([a, b], near_threshold=0.7).drops
    assert drop.key == b.key and drop.reason == DropReason.near_duplicate
    estimate = float(re.search(r"similarity ([0-9.]+)", drop.detail).group(1))
    assert abs(estimate - 25 / 31) < 0.1  # the true Jaccard of the two runs' shingles
    assert dedup([a, b], near_threshold=0.95).drops == []
    assert dedup([a, b], near_threshold=None).drops == []


def test_unrelated_runs_are_not_near_duplicates():
    a = attempt(distinct(30, "x"), index=0, patch=patch_for("return 2"))
    b = attempt(distinct(30, "y"), index=1, patch=patch_for("return 3"))
    assert dedup([a, b]).drops == []


def test_runs_of_different_tasks_are_never_duplicates():
    a = attempt(instance_id="t-1")
    b = attempt(instance_id="t-2")
    assert dedup([a, b]).drops == []


def test_checks_can_be_turned_off():
    a = attempt(distinct(4, "a"), index=0, patch=patch_for("return 2"))
    b = attempt(distinct(4, "b"), index=1, patch=patch_for("return 2"))
    assert dedup([a, b], by="patch", actions=False).drops[0].reason == DropReason.duplicate_patch
    assert dedup([a, b], near_threshold=None).drops == []


def test_the_choice_does_not_depend_on_input_order():
    attempts = [
        attempt(distinct(4 + i % 3, f"r{i % 2}"), teacher=f"t{i % 3}", index=i, patch=patch_for(f"return {i % 4}"))
        for i in range(12)
    ]
    expected = sorted(d.key.index for d in dedup(attempts).drops)
    shuffled = list(attempts)
    random.Random(7).shuffle(shuffled)
    assert sorted(d.key.index for d in dedup(shuffled).drops) == expected
    assert expected  # the case does exercise drops
