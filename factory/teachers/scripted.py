"""`scripted`: an offline teacher that knows the task's gold fix and acts like an agent.

For demos, tests and benchmarks without network or keys, and labelled wherever its data
goes: its model and name start with `scripted`, its trajectories have `scripted=True`, and
its turns cost 0 USD. The agent loop opens one session per attempt (`session(task, seed)`);
the session draws an outcome from the profile (solve, wrong_fix, loop, format_error,
give_up, and wander for the rest), reproducibly from the teacher's seed, the task and the
attempt seed, and plays the turns of factory/teachers/playbook.py through the real tools (on a
terminal task, factory/teachers/terminal_playbook.py: its solution's commands, not a patch).
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from factory.agent.harness import fit
from factory.errors import TeacherFatal
from factory.records import Completion, Message, Task, ToolCall, Usage
from factory.teachers.label import teacher_label
from factory.teachers.playbook import Outcome, Plan
from factory.teachers.registry import TEACHERS, TeacherKind
from factory.teachers.terminal_playbook import TerminalPlan


class ScriptedProfile(BaseModel):
    """How the scripted agent behaves. The five rates sum to at most 1; the rest wanders."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    solve: float = Field(0.6, ge=0, le=1)
    """Share of attempts that apply the gold fix, check it and submit."""
    wrong_fix: float = Field(0.15, ge=0, le=1)
    """Share that submit a plausible but wrong edit of the right file."""
    loop: float = Field(0.08, ge=0, le=1)
    """Share that repeat one action 10-14 times (the `loops` filter drops these)."""
    format_error: float = Field(0.04, ge=0, le=1)
    """Share that emit a tool call with invalid JSON arguments."""
    give_up: float = Field(0.05, ge=0, le=1)
    """Share that stop without changing anything."""
    latency_seconds: float = Field(0.0, ge=0)
    """Mean seconds each turn takes (slept, like waiting for a model's answer)."""
    latency_jitter: float = Field(0.0, ge=0, le=1)
    """Each turn takes latency_seconds × uniform(1 - jitter, 1 + jitter)."""
    parallel_calls: float = Field(0.3, ge=0, le=1)
    """How often it puts two or more tool calls in one turn where that makes sense."""

    @model_validator(mode="after")
    def _at_most_one(self) -> ScriptedProfile:
        total = sum(getattr(self, o.value) for o in Outcome if o is not Outcome.wander)
        if total > 1 + 1e-9:
            raise ValueError(
                f"solve + wrong_fix + loop + format_error + give_up is {total:g}; at most 1 (the rest wanders)"
            )
        return self

    def rates(self) -> dict[Outcome, float]:
        rates = {o: getattr(self, o.value) for o in Outcome if o is not Outcome.wander}
        return {**rates, Outcome.wander: max(0.0, 1 - sum(rates.values()))}

    def draw(self, rng: random.Random) -> Outcome:
        x, edge = rng.random(), 0.0
        for outcome, rate in self.rates().items():
            edge += rate
            if x < edge:
                return outcome
        return Outcome.wander


class ScriptedConfig(BaseModel):
    """The offline scripted teacher (no network, no key, no cost)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    kind: Literal["scripted"] = "scripted"
    """Selects this teacher kind."""
    model: str = "scripted-agent"
    """A label; it must start with `scripted`, so its data is never taken for a real model's."""
    name: str | None = None
    """Name in trajectories and the warehouse; defaults to `model`; must start with `scripted`."""
    seed: int = 0
    """Seed of every choice it makes (with the task and the attempt seed)."""
    profile: ScriptedProfile = Field(default_factory=ScriptedProfile)
    """How often it solves, fixes wrongly, loops, emits a malformed call or gives up; its latency."""

    @field_validator("model", "name")
    @classmethod
    def _labelled(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("scripted"):
            raise ValueError(
                f"{value!r} must start with 'scripted' (its data is labelled as scripted)"
            )
        return value


class ScriptedTeacher:
    """Build with a `ScriptedConfig`; the agent loop talks to `session(task, seed)`."""

    scripted = True

    def __init__(self, config: ScriptedConfig | None = None):
        self.config = config or ScriptedConfig()
        self.model = self.config.model
        self.name = teacher_label(self.config)

    def session(self, task: Task, seed: int) -> ScriptedSession:
        return ScriptedSession(self, task, seed)

    def outcome(self, task: Task, seed: int) -> Outcome:
        """What attempt `seed` on `task` will do (the draw, without playing it)."""
        return self.config.profile.draw(
            random.Random(f"outcome:{self.config.seed}:{task.instance_id}:{seed}")
        )

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion:
        raise TeacherFatal(
            f"teacher {self.name!r} is scripted and needs its task: run it through "
            "factory.agent.run_agent, which opens a session per attempt"
        )

    async def aclose(self) -> None:
        """Nothing to close; here for symmetry with the API teachers."""


class ScriptedSession:
    """One attempt of the scripted teacher: a plan of turns played back one per `complete`."""

    scripted = True

    def __init__(self, teacher: ScriptedTeacher, task: Task, seed: int):
        self.name, self.model = teacher.name, teacher.model
        self.profile = teacher.config.profile
        self.outcome = teacher.outcome(task, seed)
        key = f"{teacher.config.seed}:{task.instance_id}:{seed}"
        self._latency = random.Random(f"latency:{key}")
        fixes = [task.gold_patch, *task.alt_fixes]  # its own draw: the plan's stays as it was
        self.fix = fixes[random.Random(f"fix:{key}").randrange(len(fixes))]
        plan = Plan if task.terminal is None else TerminalPlan  # a terminal task: its solution's commands
        self._steps = plan(
            task, self.outcome, random.Random(f"plan:{key}"), self.profile.parallel_calls, self.fix
        ).steps()
        self._turn = 0

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion:
        self._turn += 1
        text, calls = next(self._steps, ("Done.", [("submit", {})]))
        jitter = self.profile.latency_jitter
        delay = self.profile.latency_seconds * self._latency.uniform(1 - jitter, 1 + jitter)
        if delay > 0:
            await asyncio.sleep(delay)
        calls = [fit(tools, name, args) for name, args in calls]  # the harness's tools (factory.agent.harness)
        tool_calls = [
            ToolCall(
                id=f"call_{self._turn:03d}_{i}",
                name=name,
                arguments=args if isinstance(args, str) else json.dumps(args),
            )
            for i, (name, args) in enumerate(calls)
        ]
        seen = json.dumps([m.to_openai() for m in messages]) + json.dumps(tools)
        written = text + "".join(c.name + c.arguments for c in tool_calls)
        return Completion(
            message=Message(role="assistant", content=text, tool_calls=tool_calls),
            stop_reason="tool_calls" if tool_calls else "stop",
            usage=Usage(input_tokens=len(seen) // 4, output_tokens=max(1, len(written) // 4)),
            cost_usd=0.0,
            seconds=delay,
        )


TEACHERS.add("scripted", TeacherKind(ScriptedConfig, ScriptedTeacher))
