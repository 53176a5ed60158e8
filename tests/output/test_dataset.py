import json

import pyarrow.parquet as pq
import pytest
from datasets import load_dataset

from factory.errors import UsageError
from factory.filters import FilterChain
from factory.output import (
    BuildSettings,
    CardMeta,
    RenderInfo,
    TokenizedRow,
    build_dataset,
    write_dataset,
)
from tests.output.sample_run import HF, PIPELINE_YAML, TASKS, TOOLS, demo_attempts, fake_tokenize

RENDER = RenderInfo(template="qwen3", template_sha256="ab" * 32, tokenizer="Qwen/Qwen3-8B", tokenizer_sha256="cd" * 32)


def build(tmp_path, **kwargs):
    return build_dataset(demo_attempts(), PIPELINE_YAML, tmp_path / "out", BuildSettings(),
                         meta=CardMeta(task_set="demo"), tasks=TASKS, **kwargs)


def load(path, config, tmp_path):
    return load_dataset(str(path), config, split="train", cache_dir=str(tmp_path / "cache"))


def test_the_messages_config_loads_back_in_trl_layout(tmp_path):
    summary = build(tmp_path)
    rows = load_dataset("parquet", data_files={"train": str(summary.out_dir / "messages/train-*.parquet")},
                        split="train", cache_dir=str(tmp_path / "cache"))
    assert len(rows) == summary.rows == 4
    assert [(r["instance_id"], r["teacher"], r["attempt"]) for r in rows] == [
        ("acme__widgets-1", "claude", 0), ("acme__widgets-1", "gpt", 0), ("acme__widgets-1", "gpt", 1),
        ("acme__widgets-2", "gpt", 1),
    ]
    row = rows[0]
    assert [m["role"] for m in row["messages"][:4]] == ["system", "user", "assistant", "tool"]
    call = row["messages"][2]["tool_calls"][0]
    assert call["type"] == "function" and isinstance(call["function"]["arguments"], str)
    assert json.loads(call["function"]["arguments"]) == {"command": "grep -rn size widgets/ # a"}
    assert row["messages"][2]["reasoning_content"] == "thinking..."
    assert row["messages"][3]["tool_call_id"] == "call_0"
    assert row["messages"][0]["tool_calls"] == []
    assert row["tools"] == TOOLS  # each schema keeps its own shape
    assert row["FAIL_TO_PASS"] == ["tests/test_widgets.py::test_size_1"]
    assert (row["repo"], row["model"], row["scripted"], row["exit"]) == ("acme/widgets", "claude-sonnet-4-5", False, "submitted")
    assert row["turns"] == 5 and row["patch"].startswith("diff --git")
    assert 0 < row["assistant_tokens"] < row["num_tokens"]
    assert row["assistant_token_share"] == pytest.approx(row["assistant_tokens"] / row["num_tokens"], abs=1e-4)
    assert row["tokens_exact"] is False
    assert row["cost_usd"] == pytest.approx(0.05)


def test_the_folder_loads_by_config_name(tmp_path):
    summary = build(tmp_path)
    rows = load(summary.out_dir, "messages", tmp_path)
    assert len(rows) == 4
    redacted = rows.filter(lambda r: r["secrets_redacted"])
    assert len(redacted) == 1
    assert HF not in json.dumps(redacted[0]["messages"])
    assert "[REDACTED:hf_token]" in redacted[0]["messages"][3]["content"]


def test_the_tokenized_config_holds_the_renderer_rows(tmp_path):
    summary = build(tmp_path, tokenize=fake_tokenize, render_info=RENDER)
    tokens = load(summary.out_dir, "tokenized", tmp_path)
    messages = load(summary.out_dir, "messages", tmp_path)
    assert len(tokens) == len(messages) == 4
    for t, m in zip(tokens, messages, strict=True):
        assert (t["instance_id"], t["teacher"], t["attempt"]) == (m["instance_id"], m["teacher"], m["attempt"])
        assert len(t["input_ids"]) == len(t["assistant_masks"]) == len(t["labels"]) == t["num_tokens"] == m["num_tokens"]
        assert t["assistant_tokens"] == sum(t["assistant_masks"]) == m["assistant_tokens"]
        assert all(label == (i if k else -100) for i, k, label in zip(t["input_ids"], t["assistant_masks"], t["labels"], strict=True))
        assert m["tokens_exact"] is True


def test_every_kept_attempt_needs_a_tokenized_row(tmp_path):
    with pytest.raises(UsageError, match="3 kept attempts have no tokenized row"):
        build(tmp_path, tokenize=lambda kept: fake_tokenize(kept[:1]), render_info=RENDER)
    with pytest.raises(UsageError, match="needs render_info"):
        build(tmp_path, tokenize=fake_tokenize)


def test_a_tokenized_row_must_be_consistent():
    key = demo_attempts()[0].key
    with pytest.raises(ValueError, match="3 input_ids but 2 assistant_masks"):
        TokenizedRow(key=key, input_ids=[1, 2, 3], assistant_masks=[0, 1])


def test_shards_and_rewrites(tmp_path):
    kept = FilterChain.from_config().run(demo_attempts()).kept
    out = tmp_path / "out"
    written = write_dataset(kept, out, max_shard_bytes=1)
    assert len(written.configs["messages"].files) == 4
    assert len(load_dataset("parquet", data_files=str(out / "messages/*.parquet"), split="train",
                            cache_dir=str(tmp_path / "cache"))) == 4
    written = write_dataset(kept[:1], out)
    assert [f.name for f in written.configs["messages"].files] == ["train-00000-of-00001.parquet"]
    assert sorted(p.name for p in (out / "messages").iterdir()) == ["train-00000-of-00001.parquet"]


def test_a_build_that_keeps_nothing_still_writes_its_card(tmp_path):
    summary = build_dataset([a for a in demo_attempts() if a.trajectory is None], PIPELINE_YAML, tmp_path / "out")
    assert summary.rows == 0
    assert pq.ParquetFile(summary.written.configs["messages"].files[0]).metadata.num_rows == 0
    assert "| all attempts |  | 1 |" in summary.card.read_text()
