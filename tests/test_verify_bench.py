"""bench/verify_bench.py in its smallest configuration, on the real engine: a command-framework
language gives a time for both graders and both resolve the gold fix; its naive grader is a
grader (the empty patch does not resolve)."""

from __future__ import annotations

import asyncio

import pytest

from factory.config import VerifierConfig
from factory.verify import DockerVerifier
from tests.bench_module import load_bench

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def bench():
    return load_bench("verify_bench")


def test_one_language_gives_both_figures_and_both_resolve(bench, docker_client):
    verifier = DockerVerifier(VerifierConfig(), run_id="test-verify-bench")
    figures = asyncio.run(bench.measure("js", rounds=1, tasks=1, client=docker_client, verifier=verifier))
    assert (figures.framework, figures.tasks, figures.rounds) == ("command", 1, 1)
    assert len(figures.naive) == len(figures.factory) == 1
    assert figures.naive_ms > 0 and figures.factory_ms > 0
    assert figures.unresolved == []
    assert "js" in bench.table([figures])


def test_the_naive_command_grader_does_not_resolve_the_empty_patch(bench, docker_client):
    (task,) = bench.demo_tasks("js", 1)
    assert task.tests.framework == "command"
    assert not bench.naive_grade(docker_client, task, "").resolved
