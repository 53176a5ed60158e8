"""What each tool call did, and the tokens each turn sampled, recorded on the trajectory's turns."""

from __future__ import annotations

from factory.agent import run_agent
from factory.config import AgentConfig
from factory.records import SampledTokens, ToolRun
from factory.teachers import OpenAIConfig, OpenAITeacher
from tests.agent.calls import SUBMIT, bash, edit
from tests.teachers.fake_api import openai_completion
from tests.teachers.samples import FAST


async def test_every_tool_call_of_a_turn_is_recorded_with_its_exit_code_whole_output_size_and_time(
    task, local, gpt, fake_api
):
    fake_api.openai(
        openai_completion(tool_calls=[bash("head -c 30000 /dev/zero | tr '\\0' x; exit 3"),
                                      edit(command="view", path="README.md"), bash("echo hi")]),
        openai_completion(tool_calls=[SUBMIT]),
    )
    t = await run_agent(task, gpt, local, AgentConfig(max_turns=5, output_limit=1000))

    first, last = t.turns
    big, view, hi = first.tool_runs
    calls = t.messages[2].tool_calls
    assert [r.call_id for r in first.tool_runs] == [c.id for c in calls]
    assert (big.exit_code, big.output_bytes, big.timed_out) == (3, 30000, False)  # the whole output, not the cut
    assert len(t.messages[3].content) < 2000  # while the model saw it cut
    assert view.exit_code is None and view.output_bytes == len(t.messages[4].content.encode())
    assert (hi.exit_code, hi.output_bytes) == (0, 3)
    assert all(r.seconds >= 0 for r in first.tool_runs)
    assert last.tool_runs == []  # submit runs nothing
    assert [turn.stop_reason for turn in t.turns] == ["tool_calls", "tool_calls"]


async def test_a_command_killed_at_its_timeout_has_no_exit_code(task, local, gpt, fake_api):
    fake_api.openai(openai_completion(tool_calls=[bash("sleep 5", timeout=1)]),
                    openai_completion(tool_calls=[SUBMIT]))
    t = await run_agent(task, gpt, local, AgentConfig(max_turns=5))

    [ran] = t.turns[0].tool_runs
    assert ran.timed_out and ran.exit_code is None
    assert ran == ToolRun(call_id=ran.call_id, exit_code=None, output_bytes=0, seconds=ran.seconds, timed_out=True)


async def test_a_teacher_that_records_tokens_leaves_them_on_each_turn(task, local, fake_api):
    teacher = OpenAITeacher(OpenAIConfig(model="Qwen/Qwen3-8B", base_url=fake_api.openai_url,
                                         record_tokens=True, **FAST))
    fake_api.openai(openai_completion(tool_calls=[bash("ls")], token_ids=[10, 11], prompt_token_ids=[1]),
                    openai_completion(tool_calls=[SUBMIT], token_ids=[12], prompt_token_ids=[1, 2]))
    t = await run_agent(task, teacher, local, AgentConfig(max_turns=5))
    await teacher.aclose()

    assert [turn.sampled for turn in t.turns] == [
        SampledTokens(completion_token_ids=[10, 11], logprobs=[-0.25, -0.25], prompt_token_ids=[1]),
        SampledTokens(completion_token_ids=[12], logprobs=[-0.25], prompt_token_ids=[1, 2]),
    ]
