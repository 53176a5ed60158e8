"""How a trajectory is rendered: which template, which thinking policy, which tokenizer."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

TEMPLATE_NAMES = ("qwen3", "chatml", "hf")
"""The templates `build_renderer` knows (`factory.render.renderer.TEMPLATES` builds them)."""


class Thinking(StrEnum):
    """Which assistant turns keep their reasoning as a `<think>` block."""

    last_query = "last_query"
    """Qwen3's own rule: only turns after the last user query (in an agent trajectory: all of them,
    since tool results are not queries); the final message gets a block even without reasoning."""
    all = "all"
    """Every assistant turn that has reasoning keeps it, wherever it stands."""
    none = "none"
    """No `<think>` blocks at all: reasoning is dropped, content is kept."""


class RenderConfig(BaseModel):
    """The rendering settings; recorded in the dataset card so a dataset says how it was made."""

    model_config = ConfigDict(extra="forbid")

    template: str = "qwen3"
    """`qwen3` (exact Qwen3 layout and ids, offline), `chatml` (generic ChatML, Qwen vocabulary),
    or `hf` (the chat template of `tokenizer`, through `transformers`)."""
    thinking: Thinking = Thinking.last_query
    """Reasoning policy for `qwen3` and `chatml`; `hf` follows its template, `none` drops reasoning."""
    tokenizer: str | None = None
    """A Hugging Face tokenizer name or local path: required by `hf`, unused by the others."""
    chat_template: str | None = None
    """`hf` only: a Jinja template (text) to use instead of the tokenizer's own, e.g. a training
    template with `{% generation %}` markers."""


def keeps_reasoning(policy: Thinking, index: int, last_query: int) -> bool:
    """Whether the assistant message at `index` may carry a `<think>` block under `policy`."""
    if policy is Thinking.none:
        return False
    return policy is Thinking.all or index > last_query
