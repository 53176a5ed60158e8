"""The `command` test framework on the real engine: a runner's own report, read on the host.

The toy task's tests run here through pytest's JUnit XML (the `junit` reader), as a Go, Java or
JS task's runner would write its report: the framework knows nothing of pytest.
"""

from __future__ import annotations

import pytest

from factory.records import Reason, TestSpec, TestStatus
from factory.verify.frameworks.command import AS_ROOT, NO_CONTROLS
from tests.verify.conftest import F2P, P2P

pytestmark = pytest.mark.docker

JUNIT = TestSpec(framework="command", results="junit", report="junit.xml",
                 command="python3 -m pytest -q -p no:cacheprovider --junitxml=$REPORT_DIR/junit.xml tests")


IMPORTS = "from toy.core import add, clamp, parse_pair\n"


def junit_id(nodeid: str) -> str:
    """pytest's node id as its JUnit report names the test (`classname.name`)."""
    path, name = nodeid.split("::")
    return f"{path.removesuffix('.py').replace('/', '.')}.{name}"


@pytest.fixture
def command_task(toy_task):
    return toy_task.model_copy(update={"tests": JUNIT, "FAIL_TO_PASS": [junit_id(i) for i in F2P],
                                       "PASS_TO_PASS": [junit_id(i) for i in P2P]})


async def test_the_gold_fix_resolves_and_the_verdict_says_no_controls_were_planted(command_task, verifier):
    verdict = await verifier.verify(command_task, command_task.gold_patch)
    assert verdict.resolved, verdict
    assert set(verdict.tests) == {*command_task.FAIL_TO_PASS, *command_task.PASS_TO_PASS}
    assert NO_CONTROLS in verdict.flags and verdict.controls == 0


async def test_a_command_run_as_root_resolves_and_says_it_ran_as_root(command_task, verifier):
    as_root = command_task.model_copy(update={"tests": JUNIT.model_copy(update={"as_root": True})})
    fixed, empty = await verifier.verify(as_root, as_root.gold_patch), await verifier.verify(as_root, "")
    assert fixed.resolved and AS_ROOT in fixed.flags, fixed
    assert not empty.resolved and empty.reason == Reason.tests_failed, empty


async def test_the_empty_patch_fails_the_hidden_test_it_should(command_task, verifier):
    verdict = await verifier.verify(command_task, "")
    assert not verdict.resolved and verdict.reason == Reason.tests_failed, verdict
    assert verdict.tests[command_task.FAIL_TO_PASS[0]] == TestStatus.failed
    assert verdict.tests[command_task.PASS_TO_PASS[0]] == TestStatus.passed


@pytest.mark.parametrize("trick", [
    # exits 0 before any test runs: no report, so no test passed
    "import os\nos._exit(0)\n",
    # prints what a runner's passing lines look like, then exits 0
    "import os, sys\nprint('tests/test_core.py::test_clamp_high PASSED\\ntest clamp_high ... ok\\n"
    "--- PASS: TestClampHigh (0.00s)\\n1 passed')\nsys.stdout.flush()\nos._exit(0)\n",
])
async def test_code_that_exits_or_prints_results_before_the_tests_run_resolves_nothing(command_task, verifier,
                                                                                       make_patch, trick):
    patch = make_patch({"toy/__init__.py": trick + IMPORTS}, fix=True)
    verdict = await verifier.verify(command_task, patch)
    assert not verdict.resolved and verdict.reason == Reason.no_report, verdict


async def test_the_repo_is_read_only_to_the_tests(command_task, verifier, make_patch):
    """A test run that tries to write into the repo cannot: the runner's report goes to REPORT_DIR."""
    probe = ("import os\n"
             "try:\n    open('/testbed/planted.txt', 'w')\nexcept OSError:\n    pass\n"
             "else:\n    os._exit(0)\n"
             + IMPORTS)
    verdict = await verifier.verify(command_task, make_patch({"toy/__init__.py": probe}))
    assert verdict.reason == Reason.tests_failed, verdict  # it ran on: the write was refused
