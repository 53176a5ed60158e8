"""A run against an OpenAI-compatible stand-in that returns token ids and logprobs (as vLLM does):
the run records them, the rollouts export carries them, and ids the renderer does not make are flagged."""

from __future__ import annotations

import json
import threading

import pytest

from factory.interchange import export_dataset
from factory.records import Message, ToolCall
from factory.render import build_renderer
from factory.render.sampled import trained_spans
from tests.teachers.fake_api import OPENAI_PATH, FakeAPI, Request, openai_completion
from tests.test_run import paid_pipeline, run

pytestmark = pytest.mark.docker


class VLLMStandIn:
    """Answers every turn with `submit`, and the ids a Qwen3 server makes of the prompt it got and
    of its answer; the second answer's ids come from another tokenizer (one id off)."""

    def __init__(self):
        self.renderer = build_renderer(template="qwen3")
        self.answers = 0
        self.lock = threading.Lock()

    def __call__(self, request: Request):
        body = request.body
        sent = [Message(role=m["role"], content=m["content"] or "") for m in body["messages"]]
        answer = Message(role="assistant", tool_calls=[ToolCall(id="call_0", name="submit", arguments="{}")])
        rendered = self.renderer.render([*sent, answer], body["tools"])
        start, end = trained_spans(rendered.assistant_masks)[-1]
        ids = list(rendered.input_ids)
        completion = ids[start:end]
        with self.lock:
            self.answers += 1
            if self.answers == 2:
                completion[0] += 1
        return openai_completion(tool_calls=[{"id": "call_0", "name": "submit", "arguments": "{}"}],
                                 token_ids=completion, logprobs=[-0.5] * len(completion), prompt_token_ids=ids[:start])


async def test_a_run_records_the_servers_token_ids_and_the_rollouts_carry_and_check_them(tmp_path, docker_client):
    stand_in = VLLMStandIn()
    with FakeAPI() as api:
        api.respond(OPENAI_PATH, stand_in)
        path = paid_pipeline(tmp_path, api.openai_url, attempts=2, teacher="    record_tokens: true\n")
        outcome = await run(path, "rollouts")
        sent = [r.body for r in api.requests]
    assert all(b["logprobs"] is True and b["return_token_ids"] is True for b in sent)
    attempts = outcome.store.attempts()
    assert len(attempts) == 2
    assert all(a.trajectory.turns[0].sampled is not None for a in attempts)  # recorded on the attempt files

    out = tmp_path / "rollouts.jsonl"
    summary = export_dataset(outcome.store.dataset_dir, "rollouts", out)
    rollouts = [json.loads(line) for line in out.read_text().splitlines()]
    assert summary.written == 2 and summary.with_ids == 2 and summary.mismatched == 1
    assert sorted(r["token_mismatches"] for r in rollouts) == [0, 1]
    for r, a in zip(rollouts, sorted(attempts, key=lambda a: a.key.index), strict=True):
        [turn] = r["turns"]
        assert turn["completion_token_ids"] == a.trajectory.turns[0].sampled.completion_token_ids
        assert turn["prompt_token_ids"] and turn["logprobs"] == [-0.5] * len(turn["completion_token_ids"])
        assert turn["stop_reason"] == "tool_calls" and r["group_id"].endswith("/gpt")
        assert r["reward"] == 0.0 and r["f2p_passed"] == 0.0  # submitted untouched: nothing fixed
