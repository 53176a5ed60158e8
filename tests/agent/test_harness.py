"""Harnesses: the mini-swe-agent profile (one bash tool, the submission sentinel) runs the real
loop, the scripted teacher works through it with bash alone, and the pipeline's shares decide
which harness each attempt gets."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from factory.agent import run_agent
from factory.agent.config import AgentConfig
from factory.agent.harness import (
    FACTORY,
    HARNESSES,
    MINI_SWE_AGENT,
    MINI_TOOLS,
    SUBMIT_COMMAND,
    SWE_AGENT,
    SWE_AGENT_TOOLS,
    pick,
)
from factory.agent.tools import TOOLS, MalformedCall
from factory.filters.loops import LoopsFilter
from factory.records import Attempt, AttemptKey, Exit, ToolCall, Verdict
from factory.teachers.playbook import Outcome
from tests.agent.local_sandbox import LocalSandbox
from tests.teachers.test_scripted import DEMO_TASKS, only

TASK = DEMO_TASKS["factory-demo__semverkit.caret-zero-minor"]


def call(name: str, **args) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=json.dumps(args))


def test_the_config_names_every_harness_and_only_those():
    assert list(HARNESSES) == ["factory", "mini-swe-agent", "swe-agent"]
    assert all(HARNESSES.get(name).name == name for name in HARNESSES)
    assert [h.name for h in AgentConfig().harnesses] == ["factory"]
    assert [h.name for h in AgentConfig(harnesses=[{"name": "swe-agent"}]).harnesses] == ["swe-agent"]
    with pytest.raises(ValueError, match="unknown harness 'aider'; valid: factory, mini-swe-agent, swe-agent"):
        AgentConfig(harnesses=[{"name": "aider"}])


def test_attempts_get_harnesses_in_their_shares_and_always_the_same_one():
    even = AgentConfig(harnesses=[{"name": "factory"}, {"name": "mini-swe-agent"}]).harnesses
    assert [pick(even, i).name for i in range(4)] == ["factory", "mini-swe-agent", "factory", "mini-swe-agent"]
    skewed = AgentConfig(harnesses=[{"name": "factory", "share": 3}, {"name": "mini-swe-agent", "share": 1}]).harnesses
    counts = Counter(pick(skewed, i).name for i in range(400))
    assert abs(counts["factory"] - 300) <= 2 and counts["factory"] + counts["mini-swe-agent"] == 400
    assert pick(skewed, 17) is pick(skewed, 17)


def test_the_mini_swe_agent_harness_has_one_bash_tool_and_submits_by_its_sentinel():
    assert [t["function"]["name"] for t in MINI_SWE_AGENT.tools] == ["bash"]
    assert MINI_SWE_AGENT.tools[0]["function"]["parameters"]["required"] == ["command"]
    assert MINI_SWE_AGENT.submits(MINI_SWE_AGENT.parse(call("bash", command=f"  {SUBMIT_COMMAND}\n")))
    assert not MINI_SWE_AGENT.submits(MINI_SWE_AGENT.parse(call("bash", command=f"{SUBMIT_COMMAND} && ls")))
    for bad, says in [(call("submit"), "the only tool is bash"), (call("str_replace_editor", command="view", path="a"),
                      "the only tool is bash"), (call("bash", command="ls", timeout=3), "unknown argument 'timeout'"),
                      (call("bash", command=3), "must be a JSON string")]:
        with pytest.raises(MalformedCall, match=says):
            MINI_SWE_AGENT.parse(bad)
    assert FACTORY.tools is TOOLS and FACTORY.submits(FACTORY.parse(call("submit")))


async def test_the_scripted_teacher_solves_a_task_with_bash_alone(tmp_path):
    sandbox, task = LocalSandbox.for_task(TASK, tmp_path)
    t = await run_agent(task, only(Outcome.solve), sandbox, AgentConfig(max_turns=30), harness=MINI_SWE_AGENT)
    assert (t.exit, t.harness, t.tools) == (Exit.submitted, "mini-swe-agent", MINI_TOOLS)
    system, instance = t.messages[0].content, t.messages[1].content
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in system and "str_replace_editor" not in system
    assert f"Run `{SUBMIT_COMMAND}` on its own." in instance and "Call `submit`" not in instance
    calls = [c for m in t.messages for c in m.tool_calls]
    assert {c.name for c in calls} == {"bash"} and json.loads(calls[-1].arguments) == {"command": SUBMIT_COMMAND}
    assert t.patch and t.patch == await sandbox.diff()
    # the same fix as the factory harness makes with its editor
    other_sandbox, other_task = LocalSandbox.for_task(TASK, tmp_path / "other")
    factory_run = await run_agent(other_task, only(Outcome.solve), other_sandbox, AgentConfig(max_turns=30))
    assert factory_run.harness == "factory" and _changed(factory_run.patch) == _changed(t.patch)


def _changed(patch: str) -> list[str]:
    return [line for line in patch.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]


async def test_the_loop_filter_catches_a_bash_only_loop(tmp_path):
    sandbox, task = LocalSandbox.for_task(TASK, tmp_path)
    t = await run_agent(task, only(Outcome.loop), sandbox, AgentConfig(max_turns=30), harness=MINI_SWE_AGENT)
    assert t.harness == "mini-swe-agent"
    attempt = Attempt(key=AttemptKey(run_id="r", instance_id=task.instance_id, teacher="s", index=0), trajectory=t,
                      verdict=Verdict(resolved=True))
    rejection = LoopsFilter().check(attempt)
    assert rejection is not None and rejection.reason == "repeated_action"


async def test_the_swe_agent_harness_has_its_tool_schemas_prompt_layout_and_observations(tmp_path):
    names = [t["function"]["name"] for t in SWE_AGENT.tools]
    assert names == ["bash", "str_replace_editor", "submit"]
    assert list(SWE_AGENT.tools[0]["function"]["parameters"]["properties"]) == ["command"]  # no timeout
    editor = SWE_AGENT.tools[1]["function"]["parameters"]
    assert set(editor["properties"]) == {"command", "path", "file_text", "old_str", "new_str", "insert_line", "view_range"}
    with pytest.raises(MalformedCall, match="bash: unknown argument 'timeout'"):
        SWE_AGENT.parse(call("bash", command="ls", timeout=5))
    sandbox, task = LocalSandbox.for_task(TASK, tmp_path)
    t = await run_agent(task, only(Outcome.solve), sandbox, AgentConfig(max_turns=30), harness=SWE_AGENT)
    assert (t.exit, t.harness, t.tools) == (Exit.submitted, "swe-agent", SWE_AGENT_TOOLS)
    assert t.messages[1].content.startswith(f"<uploaded_files>\n{task.workdir}\n</uploaded_files>")
    assert "<pr_description>" in t.messages[1].content
    results = [m.content for m in t.messages if m.role == "tool"]
    assert results and all(r.startswith("OBSERVATION:\n") for r in results)
    assert all("timeout" not in json.loads(c.arguments) for m in t.messages for c in m.tool_calls)
    assert t.patch and t.patch == await sandbox.diff()
