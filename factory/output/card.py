"""The dataset card (`README.md`): Hub metadata up top, then how the data was made.

A reader who never saw the run should learn from it what a row is, which teachers and tasks
it came from, what was dropped and why, how tokens and the loss mask work, and how to load
it for TRL's SFTTrainer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from factory.filters import ChainResult, FiltersConfig, SecretScanner, drop_meanings
from factory.output.rows import DATASETS_REQUIREMENT
from factory.output.stats import LanguageStats, TaskStats, TeacherStats, TokenStats
from factory.output.writer import (
    ATTEMPTS,
    CONFIGS,
    MESSAGES,
    PLOTS,
    TOKENIZED,
    WrittenDataset,
    data_files_pattern,
)
from factory.records import Guarantee, VerifiedBy
from factory.report.model import Plot

SIZE_CATEGORIES: tuple[tuple[float, str], ...] = (
    (1e3, "n<1K"),
    (1e4, "1K<n<10K"),
    (1e5, "10K<n<100K"),
    (1e6, "100K<n<1M"),
    (1e7, "1M<n<10M"),
    (1e8, "10M<n<100M"),
    (1e9, "100M<n<1B"),
    (1e10, "1B<n<10B"),
    (1e11, "10B<n<100B"),
    (1e12, "100B<n<1T"),
    (float("inf"), "n>1T"),
)
"""The Hub's official `size_categories` buckets, each with the row count it stays below."""

def size_category(rows: int) -> str:
    return next(name for limit, name in SIZE_CATEGORIES if rows < limit)


class CardMeta(BaseModel):
    """What the card says about the dataset that the run's records cannot tell."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    pretty_name: str = "factory coding-agent trajectories"
    """Title on the Hub and of the card."""
    license: str = "apache-2.0"
    """License id for the published rows (from the pipeline)."""
    tags: list[str] = Field(default_factory=lambda: ["code", "agents", "sft", "trajectories", "tool-use", "factory"])
    """Hub tags; `synthetic` and `scripted` are added when a scripted teacher made any row."""
    source_datasets: list[str] = Field(default_factory=list)
    """Hub ids of the task sets the tasks came from, e.g. `SWE-bench/SWE-smith`."""
    task_set: str = ""
    """The task set in words: name, version or file, how tasks were picked."""
    command: str = ""
    """The command that made the run, e.g. `factory run pipelines/swe_smith.yaml`."""
    run_id: str = ""
    repo_id: str | None = None
    """The Hub repo id when known at build time, named in the card; the snippets load from the built
    folder until `push` writes the repo id in."""
    language: list[str] = Field(default_factory=lambda: ["en"])
    saved: dict[str, int] = Field(default_factory=dict)
    """Attempts the run never made, by the allocation decision that spared them (`at_cap`,
    `gave_up`, `hopeless`, `not_escalated`: the run folder's `allocation.json`)."""


@dataclass(frozen=True)
class RenderInfo:
    """How the `tokenized` config was made (given by the renderer)."""

    template: str
    template_sha256: str
    tokenizer: str
    tokenizer_sha256: str
    notes: str = ""
    """Anything the loss-mask description should add (e.g. thinking text kept or stripped)."""
    thinking: str = ""
    """The renderer's thinking policy (`last_query`, `all`, `none`), when it has one."""


@dataclass
class CardInputs:
    meta: CardMeta
    pipeline_yaml: str
    filters: FiltersConfig
    chain: ChainResult
    teachers: list[TeacherStats]
    tasks: TaskStats
    tokens: TokenStats
    written: WrittenDataset
    render: RenderInfo | None
    factory_version: str
    built_at: str
    build_command: str | None = None
    plots: Sequence[Plot] = ()
    """The run's plots, drawn into the dataset's plots/ folder (`factory.report`)."""
    languages: Sequence[LanguageStats] = ()
    """Per language of the tasks: attempts, pass rate and rows kept."""


def _fence(text: str, lang: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def scripted_rows(inputs: CardInputs) -> int:
    return sum(1 for r in inputs.written.rows if r["scripted"])


def source_verified_rows(inputs: CardInputs) -> int:
    """Rows whose source vouched for them (`factory import --trust-source`): factory ran no test."""
    return sum(1 for r in inputs.written.rows if r.get("verified_by") == VerifiedBy.source)


def card_metadata(inputs: CardInputs) -> dict[str, Any]:
    tags = list(inputs.meta.tags)
    if scripted_rows(inputs):
        tags += [t for t in ("synthetic", "scripted") if t not in tags]
    configs = []
    for name in CONFIGS:
        if name in inputs.written.configs:
            config: dict[str, Any] = {
                "config_name": name,
                "data_files": [{"split": "train", "path": data_files_pattern(name)}],
            }
            if name == MESSAGES:
                config["default"] = True
            configs.append(config)
    return {
        "pretty_name": inputs.meta.pretty_name,
        "license": inputs.meta.license,
        "language": inputs.meta.language,
        "tags": tags,
        "task_categories": ["text-generation"],
        "size_categories": [size_category(inputs.written.configs[MESSAGES].rows)],
        "source_datasets": inputs.meta.source_datasets,
        "configs": configs,
    }


def _scripted_warning(inputs: CardInputs) -> str:
    n = scripted_rows(inputs)
    if not n:
        return ""
    total = len(inputs.written.rows)
    return (
        f"> **Scripted-teacher data.** {n} of the {total} rows {'was' if n == 1 else 'were'} produced by "
        "factory's offline `scripted` teacher, which replays prepared actions instead of calling a model. "
        "Scripted rows show how the pipeline works; they are not model behaviour and are not meant for "
        'training. They have `scripted: true`: `rows.filter(lambda r: not r["scripted"])` leaves them out.\n\n'
    )


def _source_verified_notice(inputs: CardInputs) -> str:
    n = source_verified_rows(inputs)
    if not n:
        return ""
    total = len(inputs.written.rows)
    mixed = (f"The dataset mixes them with {total - n} row(s) that factory verified itself (`verified_by: "
             '"factory"`). ' if n < total else "")
    return (
        f"> **Rows verified by their source, not by factory.** {n} of the {total} rows were imported with "
        "`factory import --trust-source`: their source says they solved their task, and they hold no patch "
        f'for factory to check, so no test of factory\'s ran on them. They have `verified_by: "source"`. {mixed}'
        '`rows.filter(lambda r: r["verified_by"] == "factory")` keeps only what factory verified.\n\n'
    )


def final_state_rows(inputs: CardInputs) -> int:
    """Rows of terminal tasks, judged by the final state the agent left rather than by a patch."""
    return sum(1 for r in inputs.written.rows if r.get("guarantee") == Guarantee.final_state)


def _guarantee_notice(inputs: CardInputs) -> str:
    n = final_state_rows(inputs)
    if not n:
        return ""
    counts = Counter(str(r.get("guarantee") or "none") for r in inputs.written.rows)
    rewards = [r["reward"] for r in inputs.written.rows if r.get("reward") is not None]
    kept = f" (kept rewards: {min(rewards):g} to {max(rewards):g})" if rewards else ""
    return (
        f"> **Rows judged by the final state of a machine.** {n} of the {len(inputs.written.rows)} rows are "
        "terminal tasks whose hidden tests ran in a fresh container made from the machine the agent left "
        '(`guarantee: "final-state"`), not on a patch. Such a row rests on a state the agent chose: its files, '
        "its programs, its configuration. factory refuses states that replace what the tests rely on and names "
        "other changes in the verdict, but it cannot prove the tests were not misled by that state (docs/verify.md "
        "in factory). A terminal row is resolved when the reward its tests wrote reached the pipeline's "
        f"`verifier.reward_threshold`{kept}; its `reward` column holds it. "
        '`rows.filter(lambda r: r["guarantee"] == "patch")` keeps only rows judged by their patch.\n\n'
        + _table(["guarantee", "rows"], sorted(counts.items())) + "\n\n"
    )


def _summary(inputs: CardInputs) -> str:
    rows = len(inputs.written.rows)
    teachers = ", ".join(f"`{t.teacher}`" for t in inputs.teachers) or "none"
    task_set = inputs.meta.task_set or "the run's task set"
    harnesses = sorted({str(r["harness"]) for r in inputs.written.rows}) or ["factory"]
    tools = ("`bash` and a file editor" if harnesses == ["factory"] else
             "the tools of their harness (" + ", ".join(f"`{h}`" for h in harnesses) + "; each row has its own `tools`)")
    return (
        f"{rows} agent trajectories that solved {inputs.tasks.in_dataset} coding tasks from {task_set}. "
        f"Teachers ({teachers}) ran as agents on each task in a Docker sandbox with {tools}; "
        "the agent's final diff was verified in a fresh container by the task's hidden tests; "
        "only runs that passed every FAIL_TO_PASS and PASS_TO_PASS test and ended by submitting were kept, "
        "then loops, near duplicates, over-long rows and tasks solved too often were filtered out and "
        "credentials were redacted. Each row is one full conversation in TRL's conversational layout, "
        "ready for supervised fine-tuning of a coding agent.\n"
    )


def trl_max_length(inputs: CardInputs, config: str) -> int:
    """`SFTConfig(max_length=...)` for a card snippet: TRL cuts every row to it and then drops rows
    left without a trained token (its default of 1024 drops nearly every agent trajectory), so it is
    at least the longest row. `tokenized` rows are trained as stored: the longest one. `messages` is
    rendered again by TRL: the length filter's limit, under which the rows were kept."""
    length = inputs.filters.length
    longest = inputs.tokens.max or length.max_tokens  # no rows: the snippet still reads right
    if config == MESSAGES and length.enabled:
        return max(length.max_tokens, longest)
    return longest


def _load(source: str, config: str) -> str:
    """The one way a card snippet loads a config, so that `for_hub` can find every source."""
    return f'load_dataset("{source}", "{config}", split="train")'


_LOAD_SOURCE = re.compile(r'load_dataset\("[^"\n]*", "(' + "|".join(CONFIGS) + r')", split="train"\)')


def for_hub(card: str, repo_id: str) -> str:
    """The card as pushed: every snippet loads from the repo instead of the folder it was built in."""
    return _LOAD_SOURCE.sub(lambda m: _load(repo_id, m.group(1)), card)


def _source(inputs: CardInputs) -> str:
    """Where the snippets load from: the built folder (absolute, so a snippet runs from anywhere)
    until `push` puts the repo id there."""
    return str(inputs.written.out_dir.resolve())


def _loading(inputs: CardInputs) -> str:
    source = _source(inputs)
    tokenized = TOKENIZED in inputs.written.configs
    render = inputs.render
    model = render.tokenizer if render and "/" in render.tokenizer else "Qwen/Qwen3-8B"
    out = [
        "## Load it\n\n",
        f"Loading needs `{DATASETS_REQUIREMENT}`: the `tools` column is a `datasets.Json` feature, "
        "which older versions cannot read. Each snippet runs on its own. They load the dataset from where "
        "this card is: the folder it was built in, or the Hub repo once `factory push` has sent it "
        "(a local folder loads by its path as a repo loads by its id: the card's `configs` name the files)"
        + (f"; it is meant for `{inputs.meta.repo_id}`" if inputs.meta.repo_id else "") + ".\n\n",
        _fence(
            "from datasets import load_dataset\n\n"
            f"rows = {_load(source, MESSAGES)}\n"
            'row = rows[0]\nprint(len(rows), row["instance_id"], row["teacher"], len(row["messages"]), len(row["tools"]))',
            "python",
        ),
        "\n\n## Train with TRL\n\n",
        _fence(
            "from datasets import load_dataset\nfrom trl import SFTConfig, SFTTrainer\n\n"
            f"dataset = {_load(source, MESSAGES)}\n"
            "trainer = SFTTrainer(\n"
            f'    model="{model}",  # any chat model whose template renders tools and tool calls\n'
            "    train_dataset=dataset,\n"
            "    args=SFTConfig(\n"
            '        output_dir="coding-agent-sft",\n'
            "        assistant_only_loss=True,  # learn the assistant turns only (see Loss mask)\n"
            f"        max_length={trl_max_length(inputs, MESSAGES)},  # no row is cut (TRL's default, 1024, drops most)\n"
            "    ),\n)\ntrainer.train()",
            "python",
        ),
        "\n\nSFTTrainer renders `messages` with the model's chat template and passes `tools` to it. "
        + _trl_templates(),
    ]
    if tokenized and render:
        out.append(
            f"\n\nThe `tokenized` config is already rendered with `{render.tokenizer}`: its `labels` are "
            "`input_ids` with -100 outside the assistant's tokens, and SFTTrainer trains on them as they are "
            "(without `assistant_only_loss`, which applies to conversational data only). `max_length` is the "
            "longest row, so nothing is cut:\n\n"
            + _fence(
                "from datasets import load_dataset\nfrom trl import SFTConfig, SFTTrainer\n\n"
                f"dataset = {_load(source, TOKENIZED)}\n"
                f'trainer = SFTTrainer(model="{model}", train_dataset=dataset,  # a model with the `{render.tokenizer}` tokenizer\n'
                f'                     args=SFTConfig(output_dir="coding-agent-sft", max_length={trl_max_length(inputs, TOKENIZED)}))\n'
                "trainer.train()",
                "python",
            )
        )
    return "".join(out) + "\n"


TRL_VERSION = "1.16"
TRL_TRAINING_TEMPLATES: tuple[str, ...] = (
    "cohere", "cohere2", "deepseek_r1_distill", "deepseekv3", "diffusion_gemma", "gemma", "gemma3", "glm4moe",
    "gptoss", "idefics3", "lfm2", "lfm2_v2", "llama3", "llava_next", "muse_glimmer", "nemotron_3_nano",
    "nemotron_3_super", "nemotron_3_ultra", "nemotron_3_5_lightning", "phi3", "phi3_5", "qwen2_5", "qwen2_5_vl",
    "qwen3", "qwen3_instruct_2507", "qwen3_vl", "qwen3_5_nothink", "qwen3_5_think", "qwen3_6", "qwen3_8", "smolvlm",
)
"""The chat templates TRL swaps for a training template of its own under `assistant_only_loss`
(`trl/chat_template_utils.py`: `get_training_chat_template`); a test reads them from the installed TRL."""


def _trl_templates() -> str:
    names = ", ".join(f"`{n}`" for n in TRL_TRAINING_TEMPLATES)
    return (
        f"`assistant_only_loss=True` needs a training-ready template. TRL {TRL_VERSION} uses the tokenizer's "
        "template as it is when it has `{% generation %}` markers; otherwise the template must be, character "
        f"for character, one of the templates TRL bundles a training version of ({names}: "
        "`trl/chat_templates/`), and any other one, an older revision of the same model's included, makes "
        "SFTTrainer raise `The chat template is not training-compatible`. Then give the trainer a tokenizer "
        "whose `chat_template` has the markers, e.g. `tokenizer.chat_template = "
        "trl.chat_template_utils.qwen3_training_chat_template` and `SFTTrainer(..., processing_class=tokenizer)`."
    )


def _two_configs(inputs: CardInputs) -> str:
    """How `tokenized` relates to `messages` rendered by a trainer with the model's own template."""
    render = inputs.render
    if render is None or TOKENIZED not in inputs.written.configs:
        return ""
    text = (
        "## `messages` and `tokenized`\n\n"
        "Both configs hold the same rows in the same order (keyed by `instance_id`, `run_id`, `teacher`, "
        f"`attempt`). `tokenized` is `messages` rendered by factory with the `{render.template}` template "
        f"and tokenized with `{render.tokenizer}`; training on `messages` lets the trainer render the rows "
        "again with the model's template, which need not give the same tokens."
    )
    if render.template == "qwen3" and render.thinking == "last_query":
        text += (
            " With Qwen3 the two differ in empty `<think>` blocks only. `tokenized` follows Qwen3's own "
            "template: a `<think>` block on an assistant turn that has reasoning, and an empty one on a final "
            "assistant message. TRL's Qwen3 training template, which SFTTrainer puts in for "
            "`assistant_only_loss=True`, gives every assistant turn a block, an empty "
            "`<think>\\n\\n</think>\\n\\n` where the teacher gave no reasoning. Without the empty blocks "
            "the two renderings are the same."
        )
    if render.template == "qwen3":
        text += (
            " The loss masks differ too: `tokenized` trains the `<|im_end|>` that closes an assistant turn but "
            "not the `\\n` after it (the next turn's `<|im_start|>` follows it in every rendering, so it is "
            "context), while TRL's Qwen3 training template trains `<|im_end|>\\n`: one trained token more per "
            "assistant turn."
        )
    return text + "\n"


_COLUMNS = [
    ("messages", "the conversation: `system`, `user` (the task), then `assistant` turns with `tool_calls` "
     "(arguments are JSON strings) and `tool` results; `reasoning_content` holds thinking text where the teacher gave it"),
    ("tools", "JSON schemas of the tools the agent had (`bash`, `str_replace_editor`, `submit`, ...)"),
    ("instance_id, repo", "the task and its repository"),
    ("teacher, model, attempt, run_id", "who made the run: teacher name, model id, attempt index in the run"),
    ("harness", "the scaffold the run was made in (its tools and prompts): `factory`, or the agent an import came from"),
    ("scripted", "true when factory's offline scripted teacher made the row (not model behaviour)"),
    ("verified_by", "`factory` when factory's verifier ran the hidden tests on the row's patch; `source` when "
     "the row was imported with `--trust-source` and its source's word was taken (no patch, no test run)"),
    ("guarantee", "what `resolved` rests on: `patch` (the agent's diff applied in a fresh container) or "
     "`final-state` (a terminal task's tests ran in the agent's frozen final state, a state the agent chose)"),
    ("reward", "a terminal task's reward as its tests wrote it (resolved: at or above `verifier.reward_threshold`); "
     "empty for a patch's verdict"),
    ("language", "the task's programming language, as its task set names it (`python`, `go`, `java`, ...)"),
    ("turns, exit", "assistant turns, and how the run ended (`submitted` for kept rows)"),
    ("patch", "the agent's final diff against the task's start state (what was verified)"),
    ("FAIL_TO_PASS", "the hidden tests the patch had to make pass"),
    ("num_tokens, assistant_tokens, assistant_token_share", "tokens of the rendered row and of its assistant turns"),
    ("tokens_exact", "false when token counts are character estimates (no tokenizer applied)"),
    ("cost_usd", "what the teacher's API calls cost, when the model's price is known"),
    ("secrets_redacted", "true when a credential was found and replaced by `[REDACTED:<kind>]`"),
]


def _columns(inputs: CardInputs) -> str:
    out = "## What a row holds\n\n`messages` config:\n\n" + _table(["column", "meaning"], [(f"`{c}`", m) for c, m in _COLUMNS])
    if TOKENIZED in inputs.written.configs:
        out += (
            "\n\n`tokenized` config (same rows, same order, keyed by `instance_id`, `run_id`, `teacher`, `attempt`): "
            "`input_ids`, `assistant_masks` (1 on tokens the loss is computed on), `labels` "
            "(`input_ids` with -100 outside the mask), `num_tokens`, `assistant_tokens`."
        )
    return out + "\n"


def _attempts(inputs: CardInputs) -> str:
    """The `attempts` config (`output.include_failures`): failures as data."""
    written = inputs.written.configs.get(ATTEMPTS)
    if written is None:
        return ""
    kept = len(inputs.written.rows)
    return (
        "## Failures too: the `attempts` config\n\n"
        f"{_count(written.rows, 'graded attempt')} of the run, passed or not ({kept} of them are the rows above), "
        "for training verifiers and preference models. Infrastructure errors are left out: they say nothing "
        "about the model. Credentials are redacted in every row.\n\n"
        + _fence(
            "from datasets import load_dataset\n\n"
            f"attempts = {_load(_source(inputs), ATTEMPTS)}\n"
            'failed = attempts.filter(lambda r: not r["resolved"])\n'
            'verifier = attempts.select_columns(["instance_id", "patch", "resolved", "reason"])  # patch -> label',
            "python",
        )
        + "\n\n"
        + _table(["column", "meaning"], [
            ("`resolved`, `outcome`", "whether the hidden tests passed; `resolved`, `unresolved:<reason>` or "
             "`unverified:<exit>` (never graded by the tests: it did not submit)"),
            ("`reason`, `decided_by`, `verdict_detail`", "why the verifier said no (`tests_failed`, "
             "`patch_rejected`, ...), which check decided it, and its words"),
            ("`tests`", "each hidden test with its status (`passed`, `failed`, `error`, `missing`, ...)"),
            ("`kept`, `dropped_by`, `drop_reason`, `drop_detail`", "the filter decision: kept in the dataset, "
             "or the first filter that dropped it and why (the funnel's reasons)"),
            ("`flags`", "`filter:code` flags, e.g. `secrets:secret_redacted`"),
            ("`teacher`, `model`, `harness`, `scripted`", "who ran it, and in which harness (tools and prompts)"),
            ("`exit`, `turns`, `cost_usd`, `wall_seconds`", "how the run ended, its assistant turns, cost and time"),
            ("`messages`, `tools`, `patch`", "the conversation, tool schemas and final diff, as in `messages`"),
        ])
        + "\n"
    )


def _provenance(inputs: CardInputs) -> str:
    meta = inputs.meta
    lines = [
        "## How it was made\n",
        f"- Made with factory {inputs.factory_version}, built {inputs.built_at}"
        + (f" from run `{meta.run_id}`." if meta.run_id else "."),
    ]
    if meta.command:
        lines.append(f"- Run command: `{meta.command}`")
    if inputs.build_command:
        lines.append(f"- Build command: `{inputs.build_command}`")
    t = inputs.tasks
    lines.append(
        f"- Tasks: {meta.task_set or 'not named'}; {t.attempted} tasks attempted, {t.solved} solved at least once, "
        f"{t.in_dataset} in the dataset."
    )
    if trusted := source_verified_rows(inputs):
        lines.append(f"- Verified: {len(inputs.written.rows) - trusted} row(s) by factory's verifier, {trusted} by "
                     "their source alone (`factory import --trust-source`, `verified_by: source`).")
    if meta.source_datasets:
        lines.append("- Source datasets: " + ", ".join(f"`{s}`" for s in meta.source_datasets))
    teacher_rows = [
        (
            f"`{s.teacher}`" + (" (scripted)" if s.scripted else ""),
            ", ".join(f"`{m}`" for m in sorted(s.models)) or "-",
            s.attempts,
            s.infra_errors,
            s.resolved,
            f"{s.pass_rate:.1%}",
            s.kept,
        )
        for s in inputs.teachers
    ]
    lines += [
        "\n### Teachers and pass rates\n",
        "Pass rate is resolved attempts over graded attempts: infrastructure errors (sandbox, engine, "
        "API or verification outages, not the model's fault) are shown apart and count neither way, "
        "as in the warehouse's `pass_rate_by_task`.\n",
        _table(["teacher", "model", "attempts", "infra errors", "resolved", "pass rate", "rows kept"], teacher_rows),
    ]
    if inputs.languages:
        lines += [
            "\n### Languages\n",
            "The language of each row's task (the `language` column), as its task set names it; pass rate as above.\n",
            _table(["language", "tasks", "attempts", "resolved", "pass rate", "rows kept"],
                   [(f"`{s.language}`", len(s.tasks), s.attempts, s.resolved, f"{s.pass_rate:.1%}", s.kept)
                    for s in inputs.languages]),
        ]
    return "\n".join(lines) + "\n"


def _funnel(inputs: CardInputs) -> str:
    chain = inputs.chain
    rows: list[tuple[Any, ...]] = [("all attempts", "", chain.n_attempts, "", "")]
    for step in chain.steps:
        reasons = ", ".join(f"`{r}` {n}" for r, n in step.reasons.most_common()) or "-"
        flags = ", ".join(f"`{f}` {n}" for f, n in step.flags.most_common())
        rows.append((f"`{step.name}`", step.n_in, step.n_out, reasons, flags or "-"))
    meanings = drop_meanings()
    seen = sorted({str(d.reason) for d in chain.drops}, key=lambda r: list(meanings).index(r) if r in meanings else len(meanings))
    glossary = "\n".join(f"- `{r}`: {meanings.get(r, 'see the filter')}" for r in seen)
    return (
        "## The funnel\n\nEvery attempt of the run went through these filters in order; each drop is "
        "counted with its reason (and recorded per attempt in the run's warehouse).\n\n"
        + _table(["stage", "in", "kept", "dropped (reason count)", "flagged"], rows)
        + (f"\n\n{glossary}" if glossary else "")
        + _cap_note(inputs)
        + _saved_note(inputs)
        + "\n\nFilter settings used for this build:\n\n"
        + _fence(yaml.safe_dump({"filters": inputs.filters.model_dump(mode="json")}, sort_keys=False), "yaml")
        + "\n"
    )


def _plots(inputs: CardInputs) -> str:
    parts = ["## The run at a glance\n\nDrawn from the run's warehouse, every attempt counted (kept or not); "
             f"`factory report {inputs.meta.run_id or 'RUN'}` makes the same plots as a page.\n"]
    for plot in inputs.plots:
        shown = f"![{plot.title}]({PLOTS}/{plot.image})" if plot.image else f"_{plot.note}_"
        parts.append(f"### {plot.title}\n\n{plot.caption}\n\n{shown}\n")
    return "\n".join(parts)


def _cap_note(inputs: CardInputs) -> str:
    """The cap acts mostly before the funnel: the run stops sampling a task once these filters keep
    `per_task` runs of it, so attempts it would drop are never made."""
    cap = inputs.filters.cap
    if not cap.enabled:
        return ""
    full = sum(n >= cap.per_task for n in Counter(a.key.instance_id for a in inputs.chain.kept).values())
    return (f"\n\n{_count(full, 'task')} of {inputs.tasks.attempted} reached the cap of {cap.per_task} runs; the run "
            "stopped sampling a task there (these same filters decide it as attempts finish), so the `cap` "
            "step drops only what was in flight or a rebuild with a lower cap.")


SPARED_BY = {"at_cap": "early stop (`at_cap`)", "gave_up": "give-up (`gave_up`)",
             "hopeless": "hopeless teachers (`hopeless`)", "not_escalated": "the cascade (`not_escalated`)"}


def _saved_note(inputs: CardInputs) -> str:
    saved = {why: n for why, n in inputs.meta.saved.items() if n}
    if not saved:
        return ""
    parts = [f"{n} by {SPARED_BY.get(why, f'`{why}`')}" for why, n in sorted(saved.items())]
    return (f"\n\nThe run never made {_count(sum(saved.values()), 'attempt')} it was allowed "
            f"(`sampling.attempts_per_task` per task and teacher): {', '.join(parts)}. Each decision is a row "
            "of the warehouse's `task_decisions`.")


def _tokens(inputs: CardInputs) -> str:
    s = inputs.tokens
    if inputs.render and TOKENIZED in inputs.written.configs:
        how = f"Tokens are counted with `{inputs.render.tokenizer}` after applying the `{inputs.render.template}` chat template."
    elif s.exact:
        how = "Tokens are counted with the renderer's tokenizer."
    else:
        how = "Token counts are **estimates** (characters / 4): no tokenizer was applied in this build."
    table = _table(
        ["rows", "tokens", "assistant tokens", "assistant share", "mean / row", "median", "p95", "max"],
        [(s.rows, f"{s.total:,}", f"{s.assistant:,}", f"{s.assistant_share:.1%}", f"{s.mean:,.0f}",
          f"{s.median:,.0f}", f"{s.p95:,}", f"{s.max:,}")],
    )
    return f"## Tokens\n\n{how}\n\n{table}\n"


def _loss_mask(inputs: CardInputs) -> str:
    text = (
        "## Loss mask\n\nOnly assistant tokens are trained on: the assistant's text, its reasoning where "
        "the template renders it, and its tool calls, with the tokens that close each assistant turn. "
        "System prompt, task statement and tool outputs are context only (mask 0, label -100), so the "
        "student learns to act, not to predict what the sandbox prints."
    )
    if inputs.render and inputs.render.notes:
        text += " " + inputs.render.notes
    if inputs.render is None:
        text += (
            " This build has no `tokenized` config; with `messages`, the mask comes from "
            "`assistant_only_loss=True` in TRL."
        )
    return text + "\n"


def _template(inputs: CardInputs) -> str:
    render = inputs.render
    if render is None:
        return (
            "## Chat template and tokenizer\n\nNot rendered in this build: rows are stored as messages and "
            "take the chat template of the model you train.\n"
        )
    return "## Chat template and tokenizer\n\n" + _table(
        ["", "name", "sha256"],
        [("chat template", f"`{render.template}`", _sha(render.template_sha256)),
         ("tokenizer", f"`{render.tokenizer}`", _sha(render.tokenizer_sha256))],
    ) + "\n"


def _sha(value: str) -> str:
    return f"`{value}`" if value else "not given"


def _pipeline(inputs: CardInputs) -> str:
    text, found = SecretScanner.from_config(inputs.filters.secrets).redact(inputs.pipeline_yaml)
    note = " (credentials in it were redacted)" if found else ""
    return f"## The pipeline\n\nThe exact pipeline file of the run{note}:\n\n{_fence(text, 'yaml')}\n"


def _limitations(inputs: CardInputs) -> str:
    redacted = sum(1 for r in inputs.written.rows if r["secrets_redacted"])
    items = [
        "Verified means the task's hidden tests pass; where tests are thin, a passing patch can still be "
        "incomplete or wrong.",
        "Teachers' habits are taught as they are, including detours later corrected within a run.",
        f"Tasks come from one task set and are capped at {inputs.filters.cap.per_task} runs each; the mix of "
        "repositories and bug kinds follows that set, not real-world frequency.",
        "Credentials are found by pattern (provider API keys, Hugging Face, cloud and GitHub tokens, private "
        f"keys); unusual secrets can slip through. {_count(redacted, 'row')} had something redacted.",
        f"Rows are published under `{inputs.meta.license}`; code from the task repositories quoted in them "
        "keeps its own license.",
    ]
    if not inputs.tokens.exact:
        items.append("Token counts and the length filter used character estimates, not a tokenizer.")
    if source_verified_rows(inputs):
        items.append(f"{_count(source_verified_rows(inputs), 'row')} verified by their source only "
                     "(`verified_by: source`): factory could not check them.")
    if final_state_rows(inputs):
        items.append(f"{_count(final_state_rows(inputs), 'row')} judged by a final state the agent chose "
                     "(`guarantee: final-state`), a weaker guarantee than a patch's.")
    if scripted_rows(inputs):
        items.append("Rows from the scripted teacher are demonstrations of the pipeline, not model behaviour.")
    return "## Limitations\n\n" + "\n".join(f"- {i}" for i in items) + "\n"


def build_card(inputs: CardInputs) -> str:
    metadata = yaml.safe_dump(card_metadata(inputs), sort_keys=False, allow_unicode=True)
    sections = [
        f"# {inputs.meta.pretty_name}\n\n{_scripted_warning(inputs)}{_source_verified_notice(inputs)}"
        f"{_guarantee_notice(inputs)}"
        f"{_summary(inputs)}",
        _loading(inputs),
        _columns(inputs),
        *([two] if (two := _two_configs(inputs)) else []),
        *([failures] if (failures := _attempts(inputs)) else []),
        _provenance(inputs),
        _funnel(inputs),
        *([_plots(inputs)] if inputs.plots else []),
        _tokens(inputs),
        _loss_mask(inputs),
        _template(inputs),
        _pipeline(inputs),
        _limitations(inputs),
    ]
    return f"---\n{metadata}---\n\n" + "\n".join(sections)
