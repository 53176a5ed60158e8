"""The agent's view of a task in Go, Rust, Java or JavaScript: its FAIL_TO_PASS tests taken out
of their files before the start state is committed (`plant.hider`), everything else as it was,
and the repo's tests still building there, so the agent can run what it can see.
"""

from __future__ import annotations

import uuid

import pytest

from factory.config import SandboxConfig
from factory.records import TestStatus
from factory.sandbox.pool import SandboxPool
from factory.verify import results
from factory.verify.frameworks.copies.base import COPY_WRITERS
from factory.verify.frameworks.copies.plant import hider
from tests.verify.test_canary import first_task

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("taskset", ["demo-go", "demo-rust", "demo-java", "demo-js"])
async def test_the_agent_never_sees_its_failing_tests_and_the_rest_still_builds(taskset):
    task, _ = first_task(taskset)
    writer = COPY_WRITERS.get(task.language)
    needles = sorted({n for t in task.FAIL_TO_PASS if (n := writer.needle(t))})
    async with SandboxPool(SandboxConfig(warm=0), run_id=f"hidden-view-{uuid.uuid4().hex[:8]}") as pool:
        sandbox = await pool.acquire(task.image, task.start, workdir=task.workdir, attempt_id="view",
                                     rewrite=hider(task))
        try:
            assert needles, task.FAIL_TO_PASS
            for needle in needles:
                found = await sandbox.exec(f"grep -rlF --exclude-dir=.git -- {needle!r} .", timeout=60)
                assert found.output.strip() == "", (needle, found.output)
            assert await sandbox.diff() == ""  # the view is the start commit: the agent's diff starts empty
            run = await sandbox.exec(f"export REPORT_DIR=/tmp; {task.tests.command}", timeout=600)
            report = run.output if not task.tests.report else (await sandbox.read_file(f"/tmp/{task.tests.report}")).decode()
            read = results.read(task.tests.results, report, exit_code=run.exit_code)
            assert read.ran, run.output[-2000:]
            assert not any(p.code is results.ProblemCode.build_failed for p in read.problems), run.output[-2000:]
            assert not any(results.status_of(read, t)[0] is not TestStatus.missing for t in task.FAIL_TO_PASS)
        finally:
            await pool.release(sandbox)
