"""The card's TRL snippets train as written, checked against the data they would load.

TRL and torch are too heavy for the suite, so the test reads each snippet's `SFTConfig(...)`
and applies to the dataset what TRL 1.16's SFTTrainer does with those settings: a
conversational check for `assistant_only_loss`, then (for pre-tokenized rows that carry
`labels`) truncation to `max_length` and the drop of rows left without a trained token.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest
from datasets import load_dataset

from factory.filters import FiltersConfig
from factory.output import BuildSettings, CardMeta, RenderInfo, build_dataset
from factory.output.rows import DATASETS_REQUIREMENT, IGNORE_INDEX
from tests.output.sample_run import PIPELINE_YAML, TASKS, demo_attempts, fake_tokenize

ROOT = Path(__file__).parents[2]
RENDER = RenderInfo(template="qwen3", template_sha256="ab" * 32, tokenizer="Qwen/Qwen3-8B",
                    tokenizer_sha256="cd" * 32, thinking="last_query")


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")


def build(tmp_path, filters=None, render=RENDER):
    settings = BuildSettings(filters=FiltersConfig.model_validate(filters or {}))
    return build_dataset(demo_attempts(), PIPELINE_YAML, tmp_path / "out", settings, meta=CardMeta(task_set="demo"),
                         tasks=TASKS, tokenize=fake_tokenize if render else None, render_info=render)


def sft_config(card: str, config: str) -> dict:
    """The keyword arguments of `SFTConfig(...)` in the card's snippet that loads `config`."""
    for block in re.findall(r"```python\n(.*?)```", card, re.S):
        if f'"{config}", split="train"' not in block or "SFTConfig(" not in block:
            continue
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "SFTConfig":
                return {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    raise AssertionError(f"no SFTConfig snippet for the {config} config")


def trl_prepare_tokenized(rows, args: dict) -> list[list[int]]:
    """TRL 1.16's preparation of a pre-tokenized dataset with `labels`: the labels it trains on."""
    if args.get("assistant_only_loss"):
        raise ValueError("You set `assistant_only_loss=True`, but the dataset is not conversational.")
    max_length = args.get("max_length", 1024)  # SFTConfig's default
    labels = [row["labels"][:max_length] if max_length is not None else row["labels"] for row in rows]
    return [lab for lab in labels if any(t != IGNORE_INDEX for t in lab)]


def test_the_tokenized_snippet_trains_every_row_whole(tmp_path):
    out = build(tmp_path).out_dir
    card = (out / "README.md").read_text()
    args = sft_config(card, "tokenized")
    rows = load_dataset(str(out), "tokenized", split="train")
    assert "assistant_only_loss" not in args
    assert args["max_length"] >= max(len(r["input_ids"]) for r in rows)
    assert trl_prepare_tokenized(rows, args) == [r["labels"] for r in rows]
    # what the issue found with the old snippet: it raised, and TRL's default length dropped the rows
    with pytest.raises(ValueError, match="not conversational"):
        trl_prepare_tokenized(rows, {**args, "assistant_only_loss": True})
    first_trained = min(r["labels"].index(next(t for t in r["labels"] if t != IGNORE_INDEX)) for r in rows)
    assert len(trl_prepare_tokenized(rows, {"max_length": first_trained})) == 0


@pytest.mark.parametrize("filters", [{}, {"length": {"enabled": False}}])
def test_the_messages_snippet_cuts_no_row(tmp_path, filters):
    out = build(tmp_path, filters).out_dir
    args = sft_config((out / "README.md").read_text(), "messages")
    rows = load_dataset(str(out), "messages", split="train")
    assert len(rows) == 4
    assert args["assistant_only_loss"] is True
    assert args["max_length"] >= max(rows["num_tokens"])


def test_the_card_says_how_the_two_configs_differ(tmp_path):
    card = build(tmp_path).card.read_text()
    assert "## `messages` and `tokenized`" in card
    assert "differ in empty `<think>` blocks only" in card
    assert "`<think>\\n\\n</think>\\n\\n` where the teacher gave no reasoning" in card
    other = build(tmp_path / "chatml", render=RenderInfo("chatml", "", "Qwen/Qwen3-8B", "", thinking="last_query"))
    assert "## `messages` and `tokenized`" in other.card.read_text()
    assert "empty `<think>` blocks only" not in other.card.read_text()
    plain = build(tmp_path / "plain", render=None).card.read_text()
    assert "## `messages` and `tokenized`" not in plain


def test_the_card_names_the_datasets_version_that_loads_it(tmp_path):
    card = build(tmp_path).card.read_text()
    assert f"Loading needs `{DATASETS_REQUIREMENT}`" in card
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert any(d.startswith(DATASETS_REQUIREMENT) for d in dependencies)  # the floor factory itself needs
