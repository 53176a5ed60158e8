"""`factory export --rows/--filter/--thinking` and `--format dpo`, each export loaded the way the
trainer it targets documents: TRL's dataset utilities on the TRL code written beside the file, with
Qwen3's real tokenizer and chat template (shipped in a registry package, no Hub)."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest
import yaml
from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter

from factory.interchange import export_dataset, openai_chat, read_kept, sharegpt
from factory.interchange.export import ExportOptions
from factory.interchange.kept import Which
from factory.interchange.shape import RowShape, ThinkingPolicy
from factory.records import Message
from factory.render import build_renderer
from factory.render.vocab import qwen3_tokenizer_path
from tests.output.sample_run import run_folder

trl_data = pytest.importorskip("trl.data_utils")
transformers = pytest.importorskip("transformers")

SDK_MESSAGES = TypeAdapter(list[ChatCompletionMessageParam])


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return run_folder(tmp_path_factory.mktemp("run"))


@pytest.fixture(scope="module")
def tokenizer():
    return transformers.AutoTokenizer.from_pretrained(str(qwen3_tokenizer_path().parent))


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def export(store, fmt: str, out: Path, **options):
    return export_dataset(store.dataset_dir, fmt, out, ExportOptions(**options), attempts=store.attempts)


def trl_dataset(out: Path):
    """The `dataset` the TRL file beside the export builds, run as a user runs it."""
    return runpy.run_path(str(out.with_suffix(".trl.py")))["dataset"]


def test_step_rows_train_one_turn_each_and_trl_splits_them_at_it(store, tmp_path, tokenizer):
    kept = read_kept(store.dataset_dir)
    out = tmp_path / "steps.jsonl"
    summary = export(store, "openai", out, rows=RowShape.step)
    turns = sum(1 for row in kept for m in row.messages if m.role == "assistant")
    got = lines(out)
    assert summary.written == len(got) == turns and summary.skipped == []
    for line in got:
        assert openai_chat.check_line(line) == []
        SDK_MESSAGES.validate_python(line["messages"])
        assistant = [m for m in line["messages"] if m["role"] == "assistant"]
        assert line["messages"][-1] is assistant[-1]
        assert [m.get("weight", 1) for m in assistant] == [0] * (len(assistant) - 1) + [1]
    assert sorted({len(line["messages"]) for line in got})[:3] == [3, 5, 7]  # system, user, first turn; then a step more

    dataset = trl_dataset(out)
    assert len(dataset) == turns
    example = dataset[1]
    assert trl_data.is_conversational(example)
    rendered = trl_data.apply_chat_template(example, tokenizer, tools=example["tools"])
    whole = tokenizer.apply_chat_template(example["prompt"] + example["completion"], tools=example["tools"], tokenize=False)
    assert rendered["prompt"] + rendered["completion"] == whole
    assert rendered["completion"].startswith("<think>") and rendered["completion"].endswith("</tool_call><|im_end|>\n")
    assert "weight" not in json.dumps(example["prompt"])


def test_last_rows_keep_the_whole_conversation_and_train_its_final_turn(store, tmp_path):
    out = tmp_path / "last.jsonl"
    export(store, "openai", out, rows=RowShape.last)
    kept = read_kept(store.dataset_dir)
    got = lines(out)
    assert len(got) == len(kept)
    for line, row in zip(got, kept, strict=True):
        last = max(i for i, m in enumerate(row.messages) if m.role == "assistant")
        assert len(line["messages"]) == last + 1
        assert [m.get("weight") for m in line["messages"] if m["role"] == "assistant"][-2:] == [0, 1]
    block = yaml.safe_load(out.with_suffix(".axolotl.yaml").read_text())["datasets"][0]
    assert block["message_field_training"] == "weight" and block["path"] == str(out)
    every = tmp_path / "every.jsonl"
    export(store, "openai", every)
    assert "message_field_training" not in yaml.safe_load(every.with_suffix(".axolotl.yaml").read_text())["datasets"][0]
    assert all("weight" not in m for line in lines(every) for m in line["messages"])


@pytest.mark.parametrize(("which", "labels"), [
    (Which.failed, ["acme__widgets-2/claude/0"]),
    (Which.resolved, ["acme__widgets-1/claude/0", "acme__widgets-1/claude/1", "acme__widgets-1/claude/2",
                      "acme__widgets-1/gpt/0", "acme__widgets-1/gpt/1", "acme__widgets-2/gpt/0",
                      "acme__widgets-2/gpt/1", "acme__widgets-3/claude/0"]),
])
def test_the_filter_reads_every_graded_attempt_of_the_run(store, tmp_path, which, labels):
    out = tmp_path / "x.jsonl"
    export(store, "sharegpt", out, which=which)
    assert [line["id"] for line in lines(out)] == labels  # the outage (no trajectory) never goes out
    everything = tmp_path / "all.jsonl"
    assert export(store, "sharegpt", everything, which=Which.all).written == 9
    assert "[REDACTED:" in everything.read_text()  # redacted here: most of these never met the secrets filter


def test_context_thinking_keeps_reasoning_only_where_it_is_not_trained(store, tmp_path):
    out = tmp_path / "steps.jsonl"
    export(store, "sharegpt", out, rows=RowShape.step, thinking=ThinkingPolicy.context)
    claude = [line for line in lines(out) if "/claude/" in line["id"]]
    assert claude and all(sharegpt.check_line(line) == [] for line in claude)
    for line in claude:
        *history, trained = [t["value"] for t in line["conversations"] if t["from"] in ("gpt", "function_call")]
        assert "thinking..." not in trained
        assert all("<think>\nthinking..." in value for value in history)
    info = json.loads((tmp_path / "dataset_info.json").read_text())
    assert info["steps"]["file_name"] == "steps.jsonl" and info["steps"]["formatting"] == "sharegpt"
    assert yaml.safe_load((tmp_path / "steps.llamafactory.yaml").read_text())["mask_history"] is True
    export(store, "sharegpt", tmp_path / "whole.jsonl", thinking=ThinkingPolicy.drop)
    assert set(json.loads((tmp_path / "dataset_info.json").read_text())) == {"steps", "whole"}  # merged
    assert "thinking..." not in (tmp_path / "whole.jsonl").read_text()


def test_dpo_pairs_a_tasks_resolved_and_failed_runs_rendered_as_the_template_renders_them(store, tmp_path, tokenizer):
    out = tmp_path / "dpo.jsonl"
    summary = export(store, "dpo", out)
    got = lines(out)
    assert [(line["chosen_id"], line["rejected_id"]) for line in got] == [
        ("acme__widgets-2/gpt/0", "acme__widgets-2/claude/0"), ("acme__widgets-2/gpt/1", "acme__widgets-2/claude/0")]
    assert summary.written == 2 and {why for _, why in summary.skipped} == {
        "no failed run of the task with the same prompt and tools to pair with"}
    dataset = trl_dataset(out)
    renderer = build_renderer(template="qwen3")
    for example in dataset:
        assert trl_data.is_conversational(example) and example["prompt"][-1]["role"] == "user"
        rendered = trl_data.maybe_apply_chat_template(example, tokenizer, tools=example["tools"])  # as DPOTrainer does
        for side in ("chosen", "rejected"):
            messages = [Message(role=m["role"], content=m["content"] or "", reasoning=m.get("reasoning_content"),
                                tool_calls=[{"id": c["id"], "name": c["function"]["name"],
                                             "arguments": c["function"]["arguments"]} for c in m.get("tool_calls", [])],
                                tool_call_id=m.get("tool_call_id")) for m in example["prompt"] + example[side]]
            assert rendered["prompt"] + rendered[side] == renderer.render(messages, example["tools"]).text


def test_dpo_refuses_shapes_and_filters_it_cannot_pair(store, tmp_path):
    from factory.errors import UsageError

    with pytest.raises(UsageError, match="pairs whole attempts"):
        export(store, "dpo", tmp_path / "x.jsonl", rows=RowShape.step)
    with pytest.raises(UsageError, match="leave out --filter resolved"):
        export(store, "dpo", tmp_path / "x.jsonl", which=Which.resolved)

