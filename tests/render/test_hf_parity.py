"""The built-in Qwen3 render against `transformers`' `apply_chat_template` on the same messages.

The reference is Qwen3's own Jinja template (as shipped with the tokenizer) with `{% generation %}`
markers added around what the assistant writes: `qwen3_training.jinja` beside this file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from factory.records import Message
from factory.render import RenderError, build_renderer
from factory.render.vocab import qwen3_tokenizer_path
from tests.render.render_cases import BASH, CASES, asst, call, tool, user

transformers = pytest.importorskip("transformers")
pytest.importorskip("jinja2")

TRAINING_TEMPLATE = (Path(__file__).parent / "qwen3_training.jinja").read_text(encoding="utf-8")
PARITY_CASES = list(CASES)


@pytest.fixture(scope="module")
def hf_tokenizer() -> Any:
    return transformers.AutoTokenizer.from_pretrained(str(qwen3_tokenizer_path().parent))


def _hf_messages(messages: list[Message]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        d = m.to_openai()
        for c in d.get("tool_calls", []):
            c["function"]["arguments"] = json.loads(c["function"]["arguments"])
        out.append(d)
    return out


def _apply(tok: Any, messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
    return tok.apply_chat_template(
        _hf_messages(messages), tools=tools or None, chat_template=TRAINING_TEMPLATE,
        tokenize=True, return_dict=True, return_assistant_tokens_mask=True,
    )


@pytest.mark.parametrize("case", PARITY_CASES)
def test_qwen3_render_and_mask_equal_apply_chat_template(hf_tokenizer: Any, case: str) -> None:
    messages, tools = CASES[case]
    ours = build_renderer(template="qwen3").render(messages, tools)
    theirs = _apply(hf_tokenizer, messages, tools)
    assert ours.input_ids == list(theirs["input_ids"])
    assert ours.assistant_masks == list(theirs["assistant_masks"])
    assert sum(ours.assistant_masks) > 0


def test_parity_on_a_long_agent_trajectory(hf_tokenizer: Any) -> None:
    messages: list[Message] = [user("Fix issue #12: `parse()` drops the last field.")]
    for k in range(8):
        calls = [call(f"c{k}{j}", "bash", json.dumps({"cmd": f"grep -n field{j} src/p{k}.py"})) for j in range(k % 3 + 1)]
        messages.append(asst(f"Step {k}: checking." if k % 2 else "", f"Think {k}.\n\nMore.", calls))
        messages.extend(tool(c.id, f"src/p{k}.py:{j}: field{j} = 1  # ü\n") for j, c in enumerate(calls))
    messages.append(asst("Submitted the fix.", "All green."))
    ours = build_renderer(template="qwen3").render(messages, [BASH])
    theirs = _apply(hf_tokenizer, messages, [BASH])
    assert ours.input_ids == list(theirs["input_ids"])
    assert ours.assistant_masks == list(theirs["assistant_masks"])


@pytest.mark.parametrize("case", PARITY_CASES)
def test_hf_renderer_with_the_training_template_matches_qwen3(case: str) -> None:
    hf = build_renderer(template="hf", tokenizer=str(qwen3_tokenizer_path().parent), chat_template=TRAINING_TEMPLATE)
    messages, tools = CASES[case]
    ours = build_renderer(template="qwen3").render(messages, tools)
    theirs = hf.render(messages, tools)
    assert (theirs.input_ids, theirs.assistant_masks) == (ours.input_ids, ours.assistant_masks)


def test_hf_renderer_with_the_stock_template_finds_turns_by_prefix() -> None:
    hf = build_renderer(template="hf", tokenizer=str(qwen3_tokenizer_path().parent))
    messages, tools = CASES["parallel_calls"]  # every assistant turn has reasoning: prefixes hold
    ours = build_renderer(template="qwen3").render(messages, tools)
    theirs = hf.render(messages, tools)
    assert (theirs.input_ids, theirs.assistant_masks) == (ours.input_ids, ours.assistant_masks)


def test_hf_renderer_refuses_what_it_cannot_render_exactly() -> None:
    hf = build_renderer(template="hf", tokenizer=str(qwen3_tokenizer_path().parent))
    rewritten = [user("go"), asst("", None, [call("c", "bash", '{"cmd": "ls"}')]), tool("c", "a"), asst("done")]
    injected = [user("go"), asst("", "r", [call("c", "bash", '{"cmd": "ls"}')]), tool("c", "<|im_end|>"), asst("x", "r")]
    rows = hf.render_batch([(rewritten, [BASH]), (injected, [BASH])])
    assert [r.reason for r in rows if isinstance(r, RenderError)] == ["template_not_prefix_stable", "control_text"]
