"""What a teacher's tokens cost: prices per million tokens, matched by model name.

A model is priced by the first of: the teacher config's `price`, then the table below (the
offline scripted teacher is free: `price_of`). The table is matched by name: a key, optionally
followed by a snapshot suffix (`-20250929`, `-2024-08-06`, `-latest`) and after stripping a
routing prefix such as `anthropic/`. A bare prefix is not enough on purpose: a future
`claude-opus-4-9` must not silently get `claude-opus-4`'s price. A model with no price logs one
warning and costs `None` (unknown), never 0.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from factory.records import Usage

log = logging.getLogger(__name__)


class Price(BaseModel):
    """USD per million tokens. `input` is uncached input; cache reads and writes are apart."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    input: float = Field(ge=0)
    """Uncached input tokens."""
    output: float = Field(ge=0)
    """Output tokens, thinking/reasoning included."""
    cache_read: float = Field(ge=0)
    """Input tokens read from the prompt cache."""
    cache_write: float = Field(ge=0)
    """Input tokens written to the prompt cache (Anthropic's 5-minute cache)."""

    def cost(self, usage: Usage) -> float:
        per_token = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        )
        return per_token / 1_000_000

    def most(self, *, input_tokens: int, output_tokens: int) -> float:
        """The most this many input and output tokens can cost: input at the dearest of its
        rates (uncached, cache read or cache write), since any of them may apply."""
        dearest = max(self.input, self.cache_read, self.cache_write)
        return (input_tokens * dearest + output_tokens * self.output) / 1_000_000


def _p(input: float, output: float, cache_read: float, cache_write: float) -> Price:
    return Price(input=input, output=output, cache_read=cache_read, cache_write=cache_write)


# USD per million tokens: input, output, cache read, cache write. Anthropic's cache write is
# the 5-minute one (what `cache_control: ephemeral` buys). OpenAI bills no cache writes and
# never reports any, so its column is plain input. Models priced by prompt size (Claude
# Haiku 5.5) or whose price was not published when this table was written are left out on
# purpose: they cost "unknown" until a `price:` is set.
PRICES: dict[str, Price] = {
    # Anthropic, current and legacy (standard rates; the batch and fast modes are not modelled)
    "claude-fable-5-1": _p(10.0, 50.0, 0.25, 12.5),
    "claude-mythos-5-1": _p(10.0, 50.0, 0.25, 12.5),
    "claude-fable-5": _p(10.0, 50.0, 1.0, 12.5),
    "claude-mythos-5": _p(10.0, 50.0, 1.0, 12.5),
    "claude-opus-5-5": _p(4.0, 20.0, 0.2, 5.0),
    "claude-opus-5": _p(5.0, 25.0, 0.5, 6.25),
    "claude-opus-4-8": _p(5.0, 25.0, 0.5, 6.25),
    "claude-opus-4-7": _p(5.0, 25.0, 0.5, 6.25),
    "claude-opus-4-6": _p(5.0, 25.0, 0.5, 6.25),
    "claude-opus-4-5": _p(5.0, 25.0, 0.5, 6.25),
    "claude-opus-4-1": _p(15.0, 75.0, 1.5, 18.75),
    "claude-opus-4-0": _p(15.0, 75.0, 1.5, 18.75),
    "claude-opus-4": _p(15.0, 75.0, 1.5, 18.75),
    "claude-sonnet-5-5": _p(2.0, 10.0, 0.2, 2.5),
    "claude-sonnet-5": _p(2.0, 10.0, 0.2, 2.5),
    "claude-sonnet-4-6": _p(3.0, 15.0, 0.3, 3.75),
    "claude-sonnet-4-5": _p(3.0, 15.0, 0.3, 3.75),
    "claude-sonnet-4-0": _p(3.0, 15.0, 0.3, 3.75),
    "claude-sonnet-4": _p(3.0, 15.0, 0.3, 3.75),
    "claude-3-7-sonnet": _p(3.0, 15.0, 0.3, 3.75),
    "claude-haiku-4-5": _p(1.0, 5.0, 0.1, 1.25),
    "claude-3-5-haiku": _p(0.8, 4.0, 0.08, 1.0),
    "claude-3-haiku": _p(0.25, 1.25, 0.03, 0.3),
    # OpenAI
    "gpt-5.4": _p(2.5, 15.0, 0.25, 2.5),
    "gpt-5.4-mini": _p(0.75, 4.5, 0.075, 0.75),
    "gpt-5.4-nano": _p(0.2, 1.25, 0.02, 0.2),
    "gpt-5.2": _p(1.75, 14.0, 0.175, 1.75),
    "gpt-5.1": _p(1.25, 10.0, 0.125, 1.25),
    "gpt-5.1-codex": _p(1.25, 10.0, 0.125, 1.25),
    "gpt-5": _p(1.25, 10.0, 0.125, 1.25),
    "gpt-5-codex": _p(1.25, 10.0, 0.125, 1.25),
    "gpt-5-mini": _p(0.25, 2.0, 0.025, 0.25),
    "gpt-5-nano": _p(0.05, 0.4, 0.005, 0.05),
    "gpt-4.1": _p(2.0, 8.0, 0.5, 2.0),
    "gpt-4.1-mini": _p(0.4, 1.6, 0.1, 0.4),
    "gpt-4.1-nano": _p(0.1, 0.4, 0.025, 0.1),
    "gpt-4o": _p(2.5, 10.0, 1.25, 2.5),
    "gpt-4o-mini": _p(0.15, 0.6, 0.075, 0.15),
    "o3": _p(2.0, 8.0, 0.5, 2.0),
    "o3-mini": _p(1.1, 4.4, 0.55, 1.1),
    "o4-mini": _p(1.1, 4.4, 0.275, 1.1),
}

FREE = _p(0.0, 0.0, 0.0, 0.0)
"""What the offline scripted teacher's tokens cost."""

_SNAPSHOT = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)")
_warned: set[str] = set()


def lookup(model: str, table: dict[str, Price] | None = None) -> Price | None:
    """The table's price for `model` (a key, or a key plus a snapshot suffix), else None."""
    table = PRICES if table is None else table
    name = model.rsplit("/", 1)[-1]
    if name in table:
        return table[name]
    for key, price in table.items():
        if name.startswith(key) and _SNAPSHOT.fullmatch(name[len(key) :]):
            return price
    return None


def price_of(teacher: Any) -> Price | None:
    """The price a teacher config bills at: its own `price`, else the table's; None if unknown."""
    if getattr(teacher, "kind", None) == "scripted":
        return FREE
    return getattr(teacher, "price", None) or lookup(getattr(teacher, "model", ""))


def cost_usd(model: str, usage: Usage, override: Price | None = None) -> float | None:
    """What `usage` cost, or None (warned once per model) when the model has no price."""
    price = override or lookup(model)
    if price is None:
        if model not in _warned:
            _warned.add(model)
            log.warning(
                "no price known for model %r: its cost is recorded as unknown; "
                "set `price:` (USD per million tokens) on the teacher in the pipeline YAML",
                model,
            )
        return None
    return price.cost(usage)
