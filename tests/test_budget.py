"""The budget holds under concurrency; a budget needs prices; CLI values are checked like the
YAML; a resume decides give-up in the order the attempts finished."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from factory.config import load_pipeline, parse_pipeline, teacher_label
from factory.executor.local import LocalExecutor
from factory.records import Attempt, AttemptKey, Exit, Trajectory, Verdict
from factory.run.budget import Budget, first_ceiling
from factory.run.folder import RunStore
from factory.run.parts import plan_of, terms_of
from factory.run.progress import QuietProgress
from factory.run.runner import load_run_tasks, run_pipeline
from factory.run.scheduler import Scheduler
from factory.sandbox.pool import SandboxPool
from factory.teachers import build_teacher
from factory.verify import DockerVerifier
from tests.teachers.fake_api import OPENAI_PATH, FakeAPI, openai_completion, slow

ROOT = Path(__file__).parent.parent
DEMO = ROOT / "pipelines/tasksets/demo"

# one turn that submits: 100k input tokens at $5/M and 1k output tokens at $50/M, $0.55
SUBMIT = openai_completion(tool_calls=[{"name": "submit", "arguments": {}}],
                           usage={"prompt_tokens": 100_000, "completion_tokens": 1_000, "total_tokens": 101_000})
PER_ATTEMPT = 0.55


def stand_in_pipeline(tmp_path: Path, url: str, *, budget: float, agent: str = "") -> Path:
    """Two tasks × four attempts of a priced stand-in teacher, four in flight."""
    path = tmp_path / "budget.yaml"
    path.write_text(f"""\
name: budget
tasks:
  source: {DEMO}
  limit: 2
teachers:
  - kind: openai
    model: stand-in-model
    name: stand-in
    base_url: {url}
    api_key: sk-test-not-a-real-key
    max_tokens: 1000
    max_retries: 0
    price: {{input: 5, output: 50, cache_read: 0, cache_write: 0}}
agent:
  max_turns: 2
  max_tokens: 120000
{agent}sandbox:
  memory: 512m
  max_live: 6
sampling:
  attempts_per_task: 4
  max_in_flight: 4
  infra_retries: 0
filters:
  cap: {{per_task: 5}}
budget:
  max_cost_usd: {budget}
output:
  dir: {tmp_path / "runs"}
""")
    return path


@pytest.mark.docker
@pytest.mark.parametrize("agent", [
    "",  # ceiling from the price and the limits: $1.30 until one finishes, then the dearest seen ($0.55)
    "  max_cost_usd: 0.6\n",  # ceiling configured
], ids=["price-bound", "agent-max-cost"])
async def test_four_in_flight_never_spend_past_the_budget(tmp_path, docker_client, agent):
    with FakeAPI() as api:
        api.respond(OPENAI_PATH, lambda request: slow(0.5, SUBMIT))  # all in flight at once if allowed
        path = stand_in_pipeline(tmp_path, api.openai_url, budget=2.0, agent=agent)
        outcome = await run_pipeline(load_pipeline(path), run_id="held", progress=QuietProgress(), command="test")
        billed = len(api.requests) * PER_ATTEMPT  # what the stand-in charged, counted on its side
    assert outcome.result.stopped == "budget"
    assert billed <= 2.0
    assert outcome.result.spent_usd == pytest.approx(billed)
    assert 2.0 - billed < PER_ATTEMPT  # and it did not stop while another attempt still fitted


def test_each_teacher_reserves_its_own_ceiling_and_then_its_dearest_attempt():
    pipeline = parse_pipeline("""\
name: two
tasks: {source: t}
teachers:
  - {kind: openai, model: m-dear, name: dear, max_tokens: 1000,
      price: {input: 10, output: 10, cache_read: 0, cache_write: 0}}
  - {kind: openai, model: m-cheap, name: cheap, max_tokens: 1000,
      price: {input: 1, output: 1, cache_read: 0, cache_write: 0}}
agent: {max_turns: 1, max_tokens: 100000}
budget: {max_cost_usd: 5}
""")
    budget = Budget(terms_of(pipeline))
    # input 2 × 100k, output 1 turn of 1k: $2.01 and $0.201
    assert budget.ceiling("dear") == pytest.approx(2.01) and budget.ceiling("cheap") == pytest.approx(0.201)
    budget.started("dear")
    budget.started("dear")  # $4.02 in flight
    assert not budget.allows("dear") and budget.allows("cheap")

    def attempt(teacher: str, index: int, cost: float | None) -> Attempt:
        key = AttemptKey(run_id="r", instance_id="t", teacher=teacher, index=index)
        return Attempt(key=key, trajectory=Trajectory(instance_id="t", teacher=teacher, model="m", messages=[],
                                                      exit=Exit.submitted, turns=[{"cost_usd": cost}]))

    budget.sampled("dear")
    budget.pay(attempt("dear", 0, 0.5))  # the dearest seen is the ceiling now, of the one in flight too
    assert budget.committed() == pytest.approx(1.0)
    budget.pay(attempt("dear", 0, 0.5))  # recorded again (verified, resumed): counted once
    assert budget.spent == pytest.approx(0.5)
    budget.pay(attempt("cheap", 0, None))  # unknown cost: charged its ceiling
    assert budget.spent == pytest.approx(0.701)


def test_the_first_ceiling_counts_output_per_turn_and_input_under_the_token_cap():
    """The example of docs/run.md: gpt-4.1, 4096 tokens a turn, 20 turns, 200k tokens an attempt."""
    pipeline = parse_pipeline("""\
name: x
tasks: {source: t}
teachers: [{kind: openai, model: gpt-4.1, max_tokens: 4096}]
agent: {max_turns: 20, max_tokens: 200000}
""")
    # 400k input at $2/M + 20 × 4096 output at $8/M
    assert first_ceiling(pipeline.teachers[0], pipeline.agent) == pytest.approx(0.8 + 0.65536)


# ---------------------------------------------------------------------------------- the CLI


def factory(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "factory.cli", *args], capture_output=True, text=True, cwd=ROOT)


UNPRICED = """\
name: unpriced
tasks:
  source: no-such-tasks.jsonl
teachers:
  - kind: openai
    model: my-local-model
    name: local
    base_url: http://127.0.0.1:9/v1
output:
  dir: runs
"""


@pytest.mark.parametrize("how", ["yaml", "option", "dry-run"])
def test_a_budget_over_a_teacher_without_a_price_is_refused_at_start(tmp_path, how):
    path = tmp_path / "p.yaml"
    path.write_text(UNPRICED + ("budget:\n  max_cost_usd: 0.01\n" if how != "option" else ""))
    out = factory("run", str(path), "--run-id", "r", *(["--max-cost", "0.01"] if how == "option" else []),
                  *(["--dry-run"] if how == "dry-run" else []))
    assert out.returncode == 2, out.stdout + out.stderr
    [line] = out.stderr.strip().splitlines()
    assert "teachers[0].model" in line and "'local'" in line and "price:" in line
    assert not (tmp_path / "runs").exists()  # refused before the run folder exists


def test_a_teacher_price_in_the_pipeline_makes_the_budget_possible(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(UNPRICED.replace("    name: local\n", "    name: local\n    max_tokens: 1000\n"
                                     "    price: {input: 1, output: 2, cache_read: 0, cache_write: 0}\n"))
    out = factory("run", str(path), "--dry-run", "--max-cost", "3")
    assert out.returncode == 0, out.stderr
    assert "budget        $3.00" in out.stdout and "local $" in out.stdout


@pytest.mark.parametrize(("option", "value"), [("--limit", "0"), ("--limit", "-1"), ("--max-cost", "-1"),
                                               ("--max-cost", "0"), ("--max-cost", "nan")])
def test_command_line_values_are_checked_like_the_yaml(option, value):
    out = factory("run", "pipelines/demo.yaml", "--dry-run", option, value)
    assert out.returncode == 2, out.stdout
    [line] = out.stderr.strip().splitlines()
    assert line.startswith(f"factory: {option} ")


@pytest.mark.parametrize(("given", "shown"), [("0.001", "$0.001"), ("12.5", "$12.50"), ("1000", "$1000.00")])
def test_dry_run_shows_the_budget_as_given(given, shown):
    out = factory("run", "pipelines/demo.yaml", "--dry-run", "--max-cost", given)
    assert out.returncode == 0, out.stderr
    assert f"budget        {shown}\n" in out.stdout


# ------------------------------------------------------------------------------- resume


def order_pipeline(tmp_path: Path) -> Path:
    path = tmp_path / "order.yaml"
    path.write_text(f"""\
name: order
tasks:
  source: {DEMO}
  limit: 1
teachers:
  - {{kind: scripted, model: scripted-a, profile: {{solve: 0, wrong_fix: 0, loop: 0, format_error: 0, give_up: 1}}}}
  - {{kind: scripted, model: scripted-b, profile: {{solve: 0, wrong_fix: 0, loop: 0, format_error: 0, give_up: 1}}}}
sandbox:
  memory: 512m
sampling:
  attempts_per_task: 4
  give_up_after_failures: 3
  max_in_flight: 2
output:
  dir: {tmp_path / "runs"}
""")
    return path


@pytest.mark.docker
async def test_resume_folds_attempts_in_the_order_they_finished(tmp_path, docker_client):
    """scripted-b's success finished first, then scripted-a failed three times: the run kept going.
    In file order (a's three failures first) the task would have given up, so the resume must not."""
    pipeline = load_pipeline(order_pipeline(tmp_path))
    [task], _ = load_run_tasks(pipeline)
    store = RunStore(tmp_path / "runs" / "order")
    store.start("", "test", "test")

    def finished(teacher: str, index: int, second: int, solved: bool) -> Attempt:
        key = AttemptKey(run_id="order", instance_id=task.instance_id, teacher=teacher, index=index)
        trajectory = Trajectory(instance_id=task.instance_id, teacher=teacher, model=teacher, messages=[],
                                exit=Exit.submitted, patch=task.gold_patch if solved else "")
        return Attempt(key=key, trajectory=trajectory, verdict=Verdict(resolved=True) if solved else None,
                       finished_at=datetime(2026, 1, 1, 0, 0, second, tzinfo=UTC))

    for attempt in [finished("scripted-b", 0, 1, True), finished("scripted-a", 0, 2, False),
                    finished("scripted-a", 1, 3, False), finished("scripted-a", 2, 4, False)]:
        store.save(attempt)
    teachers = {teacher_label(t): build_teacher(t) for t in pipeline.teachers}
    async with SandboxPool(pipeline.sandbox, run_id="order") as pool:
        verifier = DockerVerifier(pipeline.verifier, pipeline.sandbox, run_id="order")
        scheduler = Scheduler(plan_of(pipeline), [task], teachers, store, progress=QuietProgress(),
                              executor=LocalExecutor(pool, verifier, teachers, pipeline.agent))
        result = await scheduler.run()
    assert result.resumed == 4 and result.kept == 1
    assert scheduler.allocator.stopped(task.instance_id) is None  # nor hopeless: b solved it
    assert result.launched == 4  # a/3 and b/1..3: a task with a success never gives up
