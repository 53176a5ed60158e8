"""Limits and prompts of the agent loop (the pipeline's `agent:` section)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import AfterValidator, Field

from factory.registry import Registry
from factory.section import Section

if TYPE_CHECKING:
    from factory.agent.harness import Harness

HARNESSES: Registry[Harness] = Registry("harness")
"""Harnesses by name, as `agent.harnesses` names them; a new one is its `Harness` and one `add`
(`factory.agent.harness`, which the package imports, adds the built-in ones). Kept here, below
the harnesses, so a config naming one is checked without this module importing them."""


class HarnessShare(Section):
    name: Annotated[str, AfterValidator(HARNESSES.check)]
    """A harness (factory.agent.harness): `factory` (bash, editor, submit), `mini-swe-agent` (bash
    alone) or `swe-agent` (SWE-agent's tool schemas and prompt layout)."""
    share: float = Field(default=1.0, gt=0)
    """Its part of each task's attempts, relative to the other harnesses' shares."""


class AgentConfig(Section):
    max_turns: int = Field(default=50, ge=1)
    """Teacher calls per attempt before it ends with exit `max_turns`."""
    max_tokens: int = Field(default=1_000_000, ge=1)
    """Input plus output tokens per attempt before exit `max_tokens`."""
    max_wall_seconds: float = Field(default=1800, gt=0)
    """Wall time per attempt before exit `timeout`."""
    max_cost_usd: float | None = Field(default=None, gt=0)
    """Cost per attempt before exit `budget`; None for no per-attempt cap."""
    command_timeout: float = Field(default=120, gt=0)
    """Seconds a single bash tool call may run before it is killed."""
    output_limit: int = Field(default=10_000, ge=100)
    """Characters of tool output shown to the teacher; the rest is cut with a marker."""
    format_error_retries: int = Field(default=0, ge=0)
    """Re-prompt this many times after a malformed tool call; 0 ends the attempt at once."""
    system_prompt: str | None = None
    """Template of the system prompt; None uses the built-in SWE prompt."""
    instance_prompt: str | None = None
    """Template of the first user message ({problem_statement}, {workdir}); None = built-in."""
    harnesses: list[HarnessShare] = Field(default_factory=lambda: [HarnessShare(name="factory")], min_length=1)
    """The harnesses attempts run in, each with its share of a task's attempts (docs/agent.md)."""
