"""A Claude teacher on SWE-smith-layout tasks: the real Anthropic SDK against the local stand-in.

The stand-in answers every conversation like a model that looks around (runs the tests, which
writes bytecode on these images), fixes the bug with the editor, checks, and submits. On a
root-only image without a `.gitignore`, at 10 and at 16 attempts in flight, every task must be
resolved and kept, and no attempt touched by an infrastructure error.
"""

from __future__ import annotations

import json

import duckdb
import pytest

from factory.agent import editor_calls
from factory.records import Task
from factory.tasks import load_taskset
from tests.swesmith_layout import ensure_image, write_pipeline, write_taskset
from tests.teachers.fake_api import (
    ANTHROPIC_PATH,
    FakeAPI,
    Reply,
    Request,
    anthropic_message,
    error,
)
from tests.test_run import run

pytestmark = pytest.mark.docker

LOOK = ("python -m pytest -q -p no:cacheprovider 2>&1 | tail -n 2; "
        "PYTHONDONTWRITEBYTECODE= python -m compileall -q . >/dev/null; git status --short | head -n 5")
CHECK = "python -m pytest -q -p no:cacheprovider 2>&1 | tail -n 1"


def _text(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)


def claude_turn(request: Request, tasks: list[Task]) -> Reply:
    """The next turn of the conversation in `request`, chosen from its task and its length."""
    messages = request.body["messages"]
    opening = _text(messages[0])
    task = next((t for t in tasks if t.problem_statement in opening), None)
    if task is None:
        return error(400, "stand-in: no task's problem statement in the first message")
    script = [
        [{"name": "bash", "input": {"command": LOOK}}],
        [{"name": "str_replace_editor", "input": call} for call in editor_calls(task.gold_patch, task.workdir)],
        [{"name": "bash", "input": {"command": CHECK}}],
        [{"name": "submit", "input": {}}],
    ]
    turn = sum(m["role"] == "assistant" for m in messages)
    if turn >= len(script):
        return error(400, f"stand-in: {task.instance_id} asked for turn {turn}")
    return anthropic_message("Next step.", tool_calls=script[turn], usage={"input_tokens": 2000, "output_tokens": 150})


def claude(api_url: str) -> str:
    return f"""\
  - kind: anthropic
    model: claude-sonnet-5-5
    name: claude
    base_url: {api_url}
    api_key: sk-ant-test-not-a-real-key
    max_retries: 2
    backoff_initial: 0.05
"""


def most_at_once(attempts) -> int:
    edges = sorted([(a.started_at, 1) for a in attempts] + [(a.finished_at, -1) for a in attempts])
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return peak


@pytest.mark.parametrize("in_flight", [10, 16])
async def test_claude_resolves_and_keeps_every_swesmith_layout_task(in_flight, tmp_path, docker_client):
    taskset = write_taskset(tmp_path / "taskset", ensure_image())
    tasks = load_taskset(str(taskset)).tasks
    assert len(tasks) * 3 >= in_flight  # enough attempts to fill every slot
    with FakeAPI(max_requests=5000) as api:
        api.respond(ANTHROPIC_PATH, lambda request: claude_turn(request, tasks))
        path = write_pipeline(tmp_path, taskset, claude(api.anthropic_url), attempts=3, stop=3, in_flight=in_flight)
        outcome = await run(path, f"claude-{in_flight}")

    attempts = outcome.store.attempts()
    assert len(attempts) == 3 * len(tasks)
    assert most_at_once(attempts) >= in_flight  # sampling slots full (verifications overlap them too)
    for a in attempts:
        where = f"{a.key.instance_id}/{a.key.index}"
        assert a.error_class is None and a.infra_failures == [], (where, a.error_class, a.infra_failures)
        assert a.trajectory.exit == "submitted" and a.verdict.resolved, (where, a.verdict)
        assert "__pycache__" not in a.trajectory.patch and "GIT binary patch" not in a.trajectory.patch, where
    with duckdb.connect(str(outcome.store.warehouse_path), read_only=True) as db:
        kept = dict(db.execute("select instance_id, count(*) filter (where kept) from v_attempts group by 1").fetchall())
    assert kept == {t.instance_id: 1 for t in tasks}  # identical fixes: dedup keeps one per task
    assert outcome.build.rows == len(tasks)
    assert all("sk-ant-test" not in json.dumps(a.model_dump(mode="json")) for a in attempts)
