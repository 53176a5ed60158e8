"""The protocol of each stage, in one place, so the architecture reads in one file.

    tasks ─► Pool ─► Sandbox ⇄ Teacher (agent loop) ─► Verifier ─► Filter ─► Renderer ─► dataset
             └──────────── Executor: where one attempt runs ────────┘
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from factory.records import (
    Attempt,
    AttemptKey,
    Completion,
    Message,
    StartState,
    Task,
    Trajectory,
    Verdict,
)


@dataclass(frozen=True)
class ExecResult:
    exit_code: int | None
    """None when the command was killed at its timeout."""
    output: str
    """stdout and stderr interleaved, truncated with a marker past the configured size."""
    timed_out: bool = False
    truncated_bytes: int = 0


class Sandbox(Protocol):
    """A live container holding a task's repo at its committed start state."""

    workdir: str

    async def exec(self, cmd: str, timeout: float | None = None, *, user: str | None = None) -> ExecResult: ...
    async def read_file(self, path: str) -> bytes: ...
    async def write_file(self, path: str, data: bytes | str) -> None: ...
    async def list_files(self, path: str) -> list[str]: ...
    async def diff(self) -> str: ...
    async def close(self) -> None: ...


class Pool(Protocol):
    """Where the scheduler gets sandboxes: prepared at a task's start state, released when done."""

    def prewarm(self, image: str, workdir: str = "/testbed", count: int | None = None) -> None: ...
    async def acquire(self, image: str, start: StartState, *, workdir: str = "/testbed", attempt_id: str,
                      rewrite: Any = None) -> Sandbox: ...
    """`rewrite`: the agent's view of the start state (`factory.sandbox.docker.Rewrite`)."""
    async def release(self, sandbox: Sandbox) -> None: ...
    def release_in_background(self, sandbox: Sandbox) -> None: ...
    def done_with(self, image: str) -> None: ...


class Teacher(Protocol):
    """A model that writes one assistant turn given the conversation and tool schemas."""

    name: str
    model: str

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion: ...


class SessionTeacher(Teacher, Protocol):
    """A teacher that must know its task (the offline scripted teacher): the agent loop calls
    `session` once per attempt and talks to the teacher it returns. API teachers have none."""

    def session(self, task: Task, seed: int) -> Teacher: ...


class Verifier(Protocol):
    async def verify(self, task: Task, patch: str, state: str | None = None) -> Verdict: ...
    """`state`: a terminal task's frozen final state (`Trajectory.final_state`)."""


@runtime_checkable
class Anticipating(Protocol):
    """A verifier told when an attempt begins sampling, so that its verification can start sooner
    (`factory.verify.ahead`), and when it ended with nothing to verify."""

    def expect(self, task: Task) -> None: ...
    def unexpect(self, task: Task) -> None: ...


@dataclass
class Sampled:
    trajectory: Trajectory
    node: str | None
    """The machine that ran it: this host's name (local), or the Ray node's id."""


class Executor(Verifier, Protocol):
    """Where the work of one attempt runs (sandbox, agent loop, verification); the scheduler
    decides what runs and when (`factory/executor/`: local, or a Ray cluster)."""

    def prewarm(self, task: Task) -> None: ...
    async def sample(self, task: Task, key: AttemptKey, seed: int, deadline: float) -> Sampled: ...
    def done_with(self, image: str) -> None: ...


class Filter(Protocol):
    """A pure stage: keeps attempts, and names a reason for every one it drops."""

    name: str

    def apply(self, attempts: list[Attempt]) -> tuple[list[Attempt], list[tuple[Attempt, str]]]: ...


class Renderer(Protocol):
    def render(self, messages: list[Message], tools: list[dict[str, Any]]) -> Any: ...
