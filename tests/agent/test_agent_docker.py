"""Whole attempts on demo tasks in real sandboxes, through each teacher, verified for real."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable

import pytest

from factory.agent import editor_calls, run_agent
from factory.config import AgentConfig, SandboxConfig
from factory.records import Exit, Reason, Task
from factory.sandbox.docker import DockerSandbox
from factory.teachers.scripted import ScriptedConfig, ScriptedProfile, ScriptedTeacher
from factory.verify.verifier import DockerVerifier
from tests.teachers.fake_api import anthropic_message, openai_completion
from tests.teachers.samples import FAKE_KEY

pytestmark = pytest.mark.docker

CONFIG = AgentConfig(max_turns=20, command_timeout=60)


@pytest.fixture
async def sandboxes(docker_client) -> AsyncIterator[Callable]:
    made: list[DockerSandbox] = []

    async def make(task: Task) -> DockerSandbox:
        sandbox = await DockerSandbox.create(
            task.image, SandboxConfig(), workdir=task.workdir, run_id="test-agent"
        )
        made.append(sandbox)
        await sandbox.prepare(task.start)
        return sandbox

    yield make
    for sandbox in made:
        await sandbox.close()


def fix_calls(task: Task) -> list[dict]:
    """The gold fix as editor calls: what a model that found the bug would send."""
    return editor_calls(task.gold_patch, task.workdir)


async def test_claude_fixes_a_demo_task(demo_tasks, claude, fake_api, sandboxes):
    task = demo_tasks["factory-demo__semverkit.caret-zero-minor"]
    sandbox = await sandboxes(task)
    [fix] = fix_calls(task)
    fake_api.anthropic(
        anthropic_message(
            "Let me find the caret logic.",
            tool_calls=[
                {"name": "bash", "input": {"command": "grep -n 'def _caret' semverkit/ranges.py"}}
            ],
        ),
        anthropic_message(
            tool_calls=[
                {
                    "name": "str_replace_editor",
                    "input": {
                        "command": "view",
                        "path": "/testbed/semverkit/ranges.py",
                        "view_range": [236, 246],
                    },
                }
            ]
        ),
        anthropic_message(
            "Patch versions need their own branch.",
            tool_calls=[
                {"name": "str_replace_editor", "input": fix},
                {
                    "name": "bash",
                    "input": {"command": "python -m pytest -q tests 2>&1 | tail -n 1"},
                },
            ],
        ),
        anthropic_message("Done.", tool_calls=[{"name": "submit", "input": {}}]),
    )
    t = await run_agent(task, claude, sandbox, CONFIG)

    assert t.exit is Exit.submitted and len(t.turns) == 4
    grep, view, edited, tests = (m.content for m in t.messages if m.role == "tool")
    assert re.match(r"\d+:def _caret\(p: _Partial\)", grep)
    assert view.splitlines()[1].startswith("   236\t")
    assert "has been edited" in edited and re.search(r"\d+ passed", tests)
    sent = fake_api.requests[-1].body["messages"]
    results = [
        b["content"]
        for turn in sent
        if turn["role"] == "user"
        for b in turn["content"]
        if b["type"] == "tool_result"
    ]
    assert results == [grep, view, edited, tests]  # what the model got is what was recorded
    verdict = await DockerVerifier().verify(task, t.patch)
    assert verdict.resolved, verdict


async def test_gpt_fixes_a_demo_task_and_no_key_reaches_the_sandbox(
    demo_tasks, gpt, fake_api, sandboxes, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    task = demo_tasks["factory-demo__cachebox.ttl-boundary"]
    sandbox = await sandboxes(task)
    [fix] = fix_calls(task)
    fake_api.openai(
        openai_completion(
            tool_calls=[
                {
                    "name": "bash",
                    "arguments": {"command": "env; cat /proc/self/environ | tr '\\0' '\\n'"},
                },
                {"name": "bash", "arguments": {"command": "grep -n '_is_expired' -r cachebox"}},
            ]
        ),
        openai_completion(
            "Expiry must include the boundary.",
            tool_calls=[{"name": "str_replace_editor", "arguments": json.dumps(fix)}],
        ),
        openai_completion(tool_calls=[{"name": "submit", "arguments": "{}"}]),
    )
    t = await run_agent(task, gpt, sandbox, CONFIG)

    assert t.exit is Exit.submitted
    assert "PATH=" in t.messages[3].content and "cachebox/cache.py" in t.messages[4].content
    assert FAKE_KEY not in t.model_dump_json()
    probe = f"cat /proc/1/environ; env; grep -rsl -e '{FAKE_KEY[:12]}' /testbed /tmp /root /home /etc /opt"
    outside = await sandbox.exec(probe, user="root")
    assert "PATH=" in outside.output and FAKE_KEY[:12] not in outside.output
    assert (await DockerVerifier().verify(task, t.patch)).resolved


@pytest.mark.parametrize("outcome, resolved", [("solve", True), ("wrong_fix", False)])
async def test_the_scripted_teacher_on_a_demo_task(outcome, resolved, demo_tasks, sandboxes):
    task = demo_tasks["factory-demo__iniconf.get-int-bool"]
    rates = {
        k: float(k == outcome) for k in ("solve", "wrong_fix", "loop", "format_error", "give_up")
    }
    teacher = ScriptedTeacher(
        ScriptedConfig(model="scripted-demo", profile=ScriptedProfile(**rates))
    )
    t = await run_agent(task, teacher, await sandboxes(task), CONFIG, attempt_seed=1)
    assert t.exit is Exit.submitted and t.scripted and t.model == "scripted-demo"
    assert not any(m.content.startswith("Error") for m in t.messages if m.role == "tool")
    verdict = await DockerVerifier().verify(task, t.patch)
    assert verdict.resolved is resolved
    if not resolved:
        assert verdict.reason is Reason.tests_failed


class RemovesTheContainer:
    """Wraps a teacher; before its second turn the container is removed behind the sandbox's back."""

    def __init__(self, inner, sandbox: DockerSandbox):
        self.inner, self.sandbox, self.calls = inner, sandbox, 0
        self.name, self.model = inner.name, inner.model

    async def complete(self, messages, tools):
        self.calls += 1
        if self.calls == 2:
            self.sandbox.container.remove(force=True)
        return await self.inner.complete(messages, tools)


async def test_a_container_that_dies_ends_the_attempt_with_sandbox_error(
    demo_tasks, gpt, fake_api, sandboxes
):
    task = demo_tasks["factory-demo__semverkit.prerelease-leak"]
    sandbox = await sandboxes(task)
    fake_api.openai(
        *[openai_completion(tool_calls=[{"name": "bash", "arguments": {"command": "ls"}}])] * 2
    )
    t = await run_agent(task, RemovesTheContainer(gpt, sandbox), sandbox, CONFIG)
    assert t.exit is Exit.sandbox_error and t.error.startswith("SandboxCrashed: container")
    assert t.patch == "" and len(t.turns) == 2
