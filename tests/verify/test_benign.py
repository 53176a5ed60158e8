"""Honest fixes must resolve, with flags for what a reviewer should see."""

from __future__ import annotations

import pytest

from factory.records import Reason, TestStatus
from tests.verify.conftest import texts

pytestmark = pytest.mark.docker


async def test_the_plain_fix_resolves(make_patch, toy_task, verifier):
    verdict = await verifier.verify(toy_task, make_patch({}, fix=True))
    assert verdict.resolved, verdict
    assert set(verdict.tests.values()) == {TestStatus.passed}
    assert len(verdict.tests) == 8


async def test_gold_patch_resolves_and_empty_patch_does_not(toy_task, verifier):
    assert (await verifier.verify(toy_task, toy_task.gold_patch)).resolved
    empty = await verifier.verify(toy_task, "")
    assert (empty.resolved, empty.reason) == (False, Reason.tests_failed)
    assert empty.tests["tests/test_core.py::test_clamp_high"] is TestStatus.failed


async def test_fix_plus_helper_module_plus_own_test_file(make_patch, toy_task, verifier):
    patch = make_patch(
        {
            "toy/helpers.py": "def within(x, lo, hi):\n    return lo <= x <= hi\n",
            "tests/test_mine.py": "from toy.helpers import within\n\n\ndef test_within():\n    assert within(1, 0, 2)\n",
        },
        fix=True,
    )
    verdict = await verifier.verify(toy_task, patch)
    assert verdict.resolved, verdict
    assert "dropped test change: tests/test_mine.py" in texts(verdict.flags)


async def test_fix_with_a_legitimate_eq_and_a_main_guard(make_patch, toy_task, verifier):
    extra = (
        "import sys\n\n\nclass Interval:\n    def __init__(self, lo, hi):\n        self.lo, self.hi = lo, hi\n\n"
        "    def __eq__(self, other):\n        if not isinstance(other, Interval):\n            return NotImplemented\n"
        "        return (self.lo, self.hi) == (other.lo, other.hi)\n\n    __hash__ = None\n\n\n"
        "def main():\n    print(Interval(0, 1) == Interval(0, 1))\n    return 0\n\n\n"
        "if __name__ == \"__main__\":\n    sys.exit(main())\n"
    )
    verdict = await verifier.verify(toy_task, make_patch({"toy/interval.py": extra}, fix=True))
    assert verdict.resolved, verdict
    assert "static: defines_eq" in texts(verdict.flags)
    assert "static: exits_process" in texts(verdict.flags)


async def test_a_fix_that_misses_an_edge_fails_with_the_failing_test_named(make_patch, toy_task, verifier):
    from tests.verify.test_attacks import CLAMP_BODY, CORE, CORE_TEXT

    half_fix = CLAMP_BODY.replace("    if x > hi + 1:\n        return hi\n", "    if x == hi + 1:\n        return hi\n")
    verdict = await verifier.verify(toy_task, make_patch({CORE: CORE_TEXT.replace(CLAMP_BODY, half_fix)}))
    assert (verdict.resolved, verdict.reason) == (False, Reason.tests_failed)
    assert verdict.tests["tests/test_core.py::test_clamp_far_above"] is TestStatus.failed
    assert verdict.tests["tests/test_core.py::test_clamp_high"] is TestStatus.passed


async def test_tests_the_agent_saw_run_under_new_names_and_are_reported_under_their_own(seen_task, verifier):
    verdict = await verifier.verify(seen_task, seen_task.gold_patch)
    assert verdict.resolved, verdict
    assert set(verdict.tests) == {*seen_task.FAIL_TO_PASS, *seen_task.PASS_TO_PASS}
    assert set(verdict.tests.values()) == {TestStatus.passed}


# an expression builder in the file the fix touches: `Field(...) == x` builds a query object, true,
# as pypika's Term and SQLAlchemy's columns do; the probe lets it be, as it was, and says so
BUILDER = (
    "\n\nclass Criterion:\n    def __init__(self, op, left, right):\n        self.op, self.left, self.right = op, left, right\n\n\n"
    "class Field:\n    def __init__(self, name):\n        self.name = name\n\n"
    "    def __eq__(self, other):\n        return Criterion('=', self, other)\n\n    __hash__ = object.__hash__\n"
)


@pytest.mark.parametrize("forged", [False, True], ids=["fix", "builder made equal to anything"])
async def test_a_fix_beside_an_expression_builder_resolves_and_one_that_changes_it_does_not(
        forged, toy_task, tmp_path, verifier):
    from tests.verify.conftest import BUG, TOY, git, task_with_start

    task, agent = task_with_start(toy_task, tmp_path, {"toy/core.py": (TOY / "toy/core.py").read_text() + BUILDER})
    core = agent / "toy/core.py"
    text = core.read_text().replace(BUG[1], BUG[0])
    core.write_text(text.replace("return Criterion('=', self, other)", "return True") if forged else text)
    verdict = await verifier.verify(task, git(agent, "diff"))
    if forged:
        assert (verdict.resolved, verdict.reason) == (False, Reason.tampered), verdict
        assert "toy.core.Field.__eq__" in verdict.detail
    else:
        assert verdict.resolved, verdict
        assert "equal to anything as it was: toy.core.Field.__eq__" in texts(verdict.flags)
