import pytest

from factory.filters import DropReason, LoopsConfig, LoopsFilter, find_loop
from tests.filters.attempt_builder import attempt, bash, distinct, edit, submit, view


def run(steps, **config):
    return LoopsFilter(LoopsConfig(**config)).run([attempt(steps)])


@pytest.mark.parametrize(("repeats", "dropped"), [(9, False), (10, True), (14, True)])
def test_repeated_action_threshold(repeats, dropped):
    steps = [bash("ls")] + [bash("python reproduce.py")] * repeats + [submit()]
    result = run(steps)
    assert bool(result.drops) is dropped
    if dropped:
        (drop,) = result.drops
        assert drop.reason == DropReason.repeated_action
        assert drop.detail.startswith(f"{repeats} repeats from action 1")


def test_paging_through_one_file_counts_as_repeats():
    pages = [view("/testbed/src/mod.py", [i * 50 + 1, i * 50 + 50]) for i in range(10)]
    (drop,) = run(pages + [submit()]).drops
    assert drop.reason == DropReason.repeated_action


def test_viewing_ten_different_files_is_not_a_loop():
    views = [view(f"/testbed/src/mod{i}.py", [1, 50]) for i in range(10)]
    assert run(views + [submit()]).drops == []


def test_whitespace_variants_are_the_same_action():
    steps = [bash("python  reproduce.py" + " " * (i % 3)) for i in range(10)]
    assert run(steps).drops[0].reason == DropReason.repeated_action


@pytest.mark.parametrize(("length", "dropped"), [(9, False), (10, True)])
def test_period_two_cycle(length, dropped):
    cycle = [edit("/testbed/a.py", "x", "y"), bash("python reproduce.py")]
    steps = [bash("ls")] + [cycle[i % 2] for i in range(length)]
    result = run(steps)
    assert bool(result.drops) is dropped
    if dropped:
        assert result.drops[0].reason == DropReason.action_cycle
        assert "cycle of 2 over 10 actions" in result.drops[0].detail


def test_period_three_cycle_is_found_and_period_four_is_not_by_default():
    three = [bash("a"), bash("b"), bash("c")]
    four = [bash("a"), bash("b"), bash("c"), bash("d")]
    assert run([three[i % 3] for i in range(12)]).drops[0].reason == DropReason.action_cycle
    assert run([four[i % 4] for i in range(16)]).drops == []
    assert run([four[i % 4] for i in range(16)], max_period=4).drops[0].reason == DropReason.action_cycle


def test_an_interrupted_repeat_is_not_a_loop():
    steps = [bash("pytest")] * 6 + [bash("git diff")] + [bash("pytest")] * 6
    assert run(steps).drops == []


def test_thresholds_are_configurable():
    steps = [bash("pytest")] * 5
    assert run(steps).drops == []
    assert run(steps, min_repeats=5).drops[0].reason == DropReason.repeated_action


def test_find_loop_reports_where_and_how_long():
    sequence = ["x", "y", "a", "a", "a", "a", "z"]
    loop = find_loop(sequence, min_repeats=3, max_period=3)
    assert (loop.period, loop.start, loop.length) == (1, 2, 4)
    assert find_loop(distinct_names(20), 10, 3) is None


def distinct_names(n):
    return [f"a{i}" for i in range(n)]


def test_a_long_varied_run_is_kept():
    assert run(distinct(60) + [submit()]).drops == []
