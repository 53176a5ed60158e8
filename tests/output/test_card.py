import ast
import re
from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest

from factory import __version__
from factory.errors import UsageError
from factory.filters import FiltersConfig
from factory.output import (
    BuildSettings,
    CardMeta,
    RenderInfo,
    build_dataset,
    check_card,
    size_category,
    validate_card,
)
from factory.output.validate import read_metadata
from tests.output.sample_run import ANTHROPIC, PIPELINE_YAML, TASKS, demo_attempts, fake_tokenize

RENDER = RenderInfo(template="qwen3", template_sha256="ab" * 32, tokenizer="Qwen/Qwen3-8B", tokenizer_sha256="cd" * 32)
META = CardMeta(
    pretty_name="acme widgets agent trajectories",
    license="mit",
    source_datasets=["SWE-bench/SWE-smith"],
    task_set="acme widgets (3 tasks)",
    command="factory run pipelines/demo.yaml",
)


def build(tmp_path, scripted=False, **kwargs):
    kwargs.setdefault("tokenize", fake_tokenize)
    kwargs.setdefault("render_info", RENDER)
    kwargs.setdefault("meta", META)
    kwargs.setdefault("tasks", TASKS)
    return build_dataset(demo_attempts(scripted=scripted), PIPELINE_YAML, tmp_path / "out",
                         BuildSettings(build_command="factory build demo --per-task 3",
                                       filters=FiltersConfig.model_validate({"dedup": {"by": "patch"}})),
                         built_at=datetime(2025, 1, 2, 3, 4, tzinfo=UTC), **kwargs)


@pytest.mark.parametrize(
    ("rows", "bucket"),
    [(0, "n<1K"), (999, "n<1K"), (1000, "1K<n<10K"), (99_999, "10K<n<100K"), (10**6, "1M<n<10M"),
     (5 * 10**9, "1B<n<10B"), (10**12, "n>1T")],
)
def test_size_categories_use_the_official_buckets(rows, bucket):
    assert size_category(rows) == bucket


def test_the_card_metadata_describes_the_configs(tmp_path):
    card = build(tmp_path).card.read_text()
    meta = read_metadata(card)
    assert meta["pretty_name"] == "acme widgets agent trajectories"
    assert meta["license"] == "mit"
    assert meta["size_categories"] == ["n<1K"]
    assert meta["source_datasets"] == ["SWE-bench/SWE-smith"]
    assert "agents" in meta["tags"] and "scripted" not in meta["tags"]
    assert meta["configs"] == [
        {"config_name": "messages", "data_files": [{"split": "train", "path": "messages/train-*.parquet"}], "default": True},
        {"config_name": "tokenized", "data_files": [{"split": "train", "path": "tokenized/train-*.parquet"}]},
    ]
    assert validate_card(tmp_path / "out") == []


def test_the_card_tells_how_the_data_was_made(tmp_path):
    card = build(tmp_path).card.read_text()
    for expected in [
        f"factory {__version__}, built 2025-01-02 03:04 UTC from run `demo-2025-01`",
        "Run command: `factory run pipelines/demo.yaml`",
        "Build command: `factory build demo --per-task 3`",
        "acme widgets (3 tasks); 3 tasks attempted, 3 solved at least once, 2 in the dataset",
        "| `claude` | `claude-sonnet-4-5` | 6 | 1 | 4 | 80.0% | 1 |",  # 4 of 5 graded: the infra error counts neither way
        "| `gpt` | `gpt-5` | 4 | 0 | 4 | 100.0% | 3 |",
        "| all attempts |  | 10 |  |  |",
        "| `resolved` | 10 | 7 | `not_resolved` 1, `no_trajectory` 1, `not_submitted` 1 | - |",
        "| `loops` | 7 | 6 | `repeated_action` 1 | - |",
        "| `dedup` | 6 | 5 | `duplicate_patch` 1 | - |",
        "| `cap` | 5 | 4 | `over_cap` 1 | - |",
        "| `secrets` | 4 | 4 | - | `secret_redacted` 1 |",
        "- `over_cap`: the task already had its quota of more diverse runs",
        "1 task of 3 reached the cap of 3 runs; the run stopped sampling a task there",
        "    per_task: 3",
        "Tokens are counted with `Qwen/Qwen3-8B` after applying the `qwen3` chat template.",
        "| chat template | `qwen3` | `" + "ab" * 32 + "` |",
        "| tokenizer | `Qwen/Qwen3-8B` | `" + "cd" * 32 + "` |",
        "Only assistant tokens are trained on",
        "from trl import SFTConfig, SFTTrainer",
        "assistant_only_loss=True",
        "## Limitations",
        "published under `mit`",
    ]:
        assert expected in card, expected
    assert "Scripted-teacher data" not in card


def test_the_exact_pipeline_is_in_the_card_with_credentials_redacted(tmp_path):
    card = build(tmp_path).card.read_text()
    assert ANTHROPIC not in card
    assert PIPELINE_YAML.replace(ANTHROPIC, "[REDACTED:anthropic_api_key]") in card
    assert "credentials in it were redacted" in card


def test_token_statistics_add_up(tmp_path):
    summary = build(tmp_path)
    rows = summary.written.rows
    total = sum(r["num_tokens"] for r in rows)
    line = next(line for line in summary.card.read_text().splitlines() if line.startswith("| 4 |"))
    assert f"| {total:,} |" in line


def test_the_card_code_is_valid_python(tmp_path):
    card = build(tmp_path).card.read_text()
    blocks = re.findall(r"```python\n(.*?)```", card, re.S)
    assert len(blocks) == 3
    for block in blocks:
        ast.parse(block)


def test_scripted_teacher_data_is_labelled(tmp_path):
    card = build(tmp_path, scripted=True).card.read_text()
    assert "> **Scripted-teacher data.** 1 of the 5 rows was produced by factory's offline `scripted` teacher" in card
    assert "| `scripted` (scripted) | `scripted-v1` |" in card
    assert {"synthetic", "scripted"} <= set(read_metadata(card)["tags"])


def test_without_a_renderer_the_card_says_so(tmp_path):
    card = build(tmp_path, tokenize=None, render_info=None).card.read_text()
    assert "Token counts are **estimates** (characters / 4)" in card
    assert "Not rendered in this build" in card
    assert [c["config_name"] for c in read_metadata(card)["configs"]] == ["messages"]


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda c: c.replace("size_categories:\n- n<1K", "size_categories:\n- n<2K"), "size_categories: ['n<2K'] is not one of"),
        (lambda c: c.replace("size_categories:\n- n<1K", "size_categories:\n- 1K<n<10K"), "1K<n<10K but the data has 4 rows"),
        (lambda c: c.replace("messages/train-*.parquet", "data/train-*.parquet"), "data/train-*.parquet matches no file"),
        (lambda c: c.replace("license: mit", "license: MIT License"), "is not a license id"),
        (lambda c: c.replace("pretty_name: ", "pretty_name: [", 1), "YAML does not parse"),
        (lambda c: c.replace("license: mit\n", ""), "license: must be a non-empty string"),
        (lambda c: c[4:], "does not start with a `---` YAML block"),
    ],
)
def test_the_validator_catches_a_broken_card(tmp_path, edit, problem):
    out = build(tmp_path).out_dir
    card = out / "README.md"
    card.write_text(edit(card.read_text()))
    problems = validate_card(out)
    assert any(problem in p for p in problems), problems
    with pytest.raises(UsageError, match="not fit to publish"):
        check_card(out)


def test_configs_must_agree_on_rows(tmp_path):
    out = build(tmp_path).out_dir
    shard = out / "tokenized" / "train-00000-of-00001.parquet"
    pq.write_table(pq.read_table(shard).slice(0, 1), shard)
    assert any("configs hold different row counts: {'messages': 4, 'tokenized': 1}" in p for p in validate_card(out))


def test_the_card_shows_the_run_s_plots_and_they_are_in_the_folder(tmp_path):
    """A run's build (`build_run`, with its warehouse) draws the plots into dataset/plots/ and the
    card links each one; push sends them with the card; a missing one makes the card unfit."""
    from factory.output.hub import local_files
    from tests.report.sample import finished_run

    dataset = finished_run(tmp_path).dataset_dir
    card = (dataset / "README.md").read_text()
    links = re.findall(r"!\[([^\]]*)\]\((plots/\w+\.png)\)", card)
    assert [title for title, _ in links] == [
        "Funnel and drop reasons", "Pass rate over tasks", "Attempts, kept rows and cost over time",
        "Turns and tokens: kept vs dropped", "Exit reasons", "Per teacher / harness", "Per language",
        "Row length against max_length", "Trained share per row", "Reward spread within groups over time",
        "Mixed groups"]  # the row-length plots too: the build records its token counts before drawing
    assert "## The run at a glance" in card and "resolved / graded attempts" in card
    for _, link in links:
        assert (dataset / link).read_bytes().startswith(b"\x89PNG"), link
    assert validate_card(dataset) == []
    assert {link for _, link in links} <= set(local_files(dataset))
    (dataset / links[0][1]).unlink()
    assert any(f"shows image {links[0][1]}, which is not in" in p for p in validate_card(dataset))


def test_a_build_without_a_warehouse_has_no_plots_section(tmp_path):
    build(tmp_path)
    card = (tmp_path / "out" / "README.md").read_text()
    assert "## The run at a glance" not in card and "![" not in card
    assert not (tmp_path / "out" / "plots").exists()


def test_the_card_says_how_many_attempts_early_stop_and_give_up_saved(tmp_path):
    assert "never made" not in build(tmp_path / "none").card.read_text()  # a run that spared nothing
    saved = META.model_copy(update={"saved": {"at_cap": 7, "gave_up": 4, "hopeless": 0}})
    card = build(tmp_path / "some", meta=saved).card.read_text()
    assert ("The run never made 11 attempts it was allowed (`sampling.attempts_per_task` per task and teacher): "
            "7 by early stop (`at_cap`), 4 by give-up (`gave_up`).") in card


def test_the_card_and_every_row_carry_the_tasks_language(tmp_path):
    w1, w2, w3 = TASKS
    tasks = {**TASKS, w2: TASKS[w2].model_copy(update={"language": "go"})}
    summary = build(tmp_path, tasks=tasks)
    card = summary.card.read_text()
    # widgets-2 (go): a loop (resolved, dropped), a failure, an outage (not graded), a kept solve with a key
    assert "\n".join([
        "| language | tasks | attempts | resolved | pass rate | rows kept |",
        "|---|---|---|---|---|---|",
        "| `go` | 1 | 4 | 2 | 66.7% | 1 |",
        "| `python` | 2 | 6 | 6 | 100.0% | 3 |",
    ]) in card
    rows = summary.written.rows
    assert {(r["instance_id"], r["language"]) for r in rows} == {(w1, "python"), (w2, "go")}
    assert "| `language` |" in card
