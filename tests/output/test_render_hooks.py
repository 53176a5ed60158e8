from datasets import load_dataset

from factory.errors import FactoryError
from factory.filters import DropReason
from factory.output import BuildSettings, CardMeta, build_dataset, render_hooks
from factory.render import build_renderer
from tests.output.sample_run import PIPELINE_YAML, TASKS, demo_attempts


class Refused(FactoryError):
    reason = "bad_arguments"


class PickyRenderer:
    """Renders a token per message and refuses any conversation that mentions variant `c`."""

    def _render(self, messages):
        if any("'print(c, " in (c.arguments) for m in messages for c in m.tool_calls):
            return Refused("arguments are not JSON")
        ids = list(range(len(messages)))
        return type("R", (), {"input_ids": ids, "assistant_masks": [int(m.role == "assistant") for m in messages]})()

    def render(self, messages, tools):
        result = self._render(messages)
        if isinstance(result, Exception):
            raise result
        return result

    def render_batch(self, conversations):
        return [self._render(messages) for messages, _ in conversations]

    def card(self):
        return {"template": "picky", "tokenizer": "picky-tok", "tokenizer_sha256": "9" * 64, "thinking": "all"}


def test_rows_the_renderer_refuses_are_dropped_in_the_funnel(tmp_path):
    hooks = render_hooks(PickyRenderer(), template_sha256="8" * 64)
    summary = build_dataset(demo_attempts(), PIPELINE_YAML, tmp_path / "out", BuildSettings(), tasks=TASKS,
                            count_tokens=hooks.count_tokens, tokenize=hooks.tokenize, render_info=hooks.info)
    (refused,) = [d for d in summary.drops if d.reason == DropReason.render_failed]
    assert refused.filter == "length" and refused.detail.startswith("bad_arguments: ")
    assert summary.rows == 4  # the cap, with one run fewer, keeps a run it dropped before
    card = summary.card.read_text()
    assert "| `length` | 6 | 5 | `render_failed` 1 | - |" in card
    assert "| chat template | `picky` | `" + "8" * 64 + "` |" in card
    assert "Reasoning kept: `all`." in card


def test_a_refusal_at_tokenize_time_adds_a_render_step(tmp_path):
    hooks = render_hooks(PickyRenderer())
    summary = build_dataset(demo_attempts(), PIPELINE_YAML, tmp_path / "out", tasks=TASKS,
                            tokenize=hooks.tokenize, render_info=hooks.info)
    assert summary.chain.steps[-1].name == "render"
    assert dict(summary.chain.steps[-1].reasons) == {"render_failed": 1}
    assert summary.rows == 3
    assert "| `render` | 4 | 3 | `render_failed` 1 | - |" in summary.card.read_text()
    assert "| chat template | `picky` | not given |" in summary.card.read_text()


def test_the_built_in_qwen3_renderer_fills_the_tokenized_config(tmp_path):
    hooks = render_hooks(build_renderer(template="qwen3"))
    summary = build_dataset(demo_attempts(), PIPELINE_YAML, tmp_path / "out", BuildSettings(), tasks=TASKS,
                            meta=CardMeta(task_set="demo"), count_tokens=hooks.count_tokens,
                            tokenize=hooks.tokenize, render_info=hooks.info)
    tokens = load_dataset(str(summary.out_dir), "tokenized", split="train", cache_dir=str(tmp_path / "cache"))
    messages = load_dataset(str(summary.out_dir), "messages", split="train", cache_dir=str(tmp_path / "cache"))
    assert len(tokens) == len(messages) == 4
    assert tokens[0]["num_tokens"] == messages[0]["num_tokens"] == len(tokens[0]["input_ids"])
    assert 0 < messages[0]["assistant_token_share"] < 1 and messages[0]["tokens_exact"]
    assert "Tokens are counted with `Qwen3` after applying the `qwen3` chat template." in summary.card.read_text()


def test_a_kept_row_whose_sampled_ids_differ_from_its_render_is_flagged_and_counted(tmp_path):
    from factory.filters import FlagCode
    from tests.render.sampled_ids import as_sampled

    renderer = build_renderer(template="qwen3")
    attempts = demo_attempts()
    for a in attempts:
        if a.trajectory is not None:
            a.trajectory = as_sampled(a.trajectory, renderer)
    differs = attempts[0].trajectory.turns[2].sampled
    differs.completion_token_ids[0] += 1  # a server with another tokenizer, say
    hooks = render_hooks(renderer)
    summary = build_dataset(attempts, PIPELINE_YAML, tmp_path / "out", BuildSettings(), tasks=TASKS,
                            count_tokens=hooks.count_tokens, tokenize=hooks.tokenize, render_info=hooks.info)

    flags = {f.key.teacher: f for f in summary.flags if f.code is FlagCode.sampled_tokens_differ}
    assert flags["claude"].key == attempts[0].key
    assert flags["claude"].detail == "turn 2: completion differs at token 0"
    # the secrets filter redacted a tool output of gpt's: the row's prompts are not what was sampled
    assert flags["gpt"].detail.startswith("turn 1: prompt differs at token ")
    assert summary.rows == 4  # flagged, not dropped
    assert "| `render` | 4 | 4 | - | `sampled_tokens_differ` 2 |" in summary.card.read_text()
    row = next(r for r in summary.written.rows if (r["teacher"], r["attempt"]) == ("claude", 0))
    assert row["secrets_redacted"] is False  # a flag of its own, not the secrets filter's
