"""The protocol of each stage, in one place, so the architecture reads in one file.

    tasks ─► Pool ─► Sandbox ⇄ Teacher (agent loop) ─► Verifier ─► Filter ─► Renderer ─► dataset
             │         └── made by a SandboxBackend (Docker, ...) ──┘
             └──────────── Executor: where one attempt runs ────────┘
                           (how a patch is verified is the Verifier's; where, the Executor's)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from factory.records import (
    Attempt,
    AttemptKey,
    Completion,
    Message,
    StartState,
    Task,
    TerminalSpec,
    Trajectory,
    Verdict,
)

if TYPE_CHECKING:
    from factory.sandbox.backend import Preparation, Rewrite
    from factory.sandbox.config import SandboxConfig
    from factory.sandbox.images import RepoImage
    from factory.sandbox.services import Service


@dataclass(frozen=True)
class ExecResult:
    exit_code: int | None
    """None when the command was killed at its timeout."""
    output: str
    """stdout and stderr interleaved, truncated with a marker past the configured size."""
    timed_out: bool = False
    truncated_bytes: int = 0


class Sandbox(Protocol):
    """A live container holding a task's repo at its committed start state (docs/sandbox.md).

    Commands run through the sandbox's command server where it has one; an `exec` whose
    container died raises `SandboxCrashed` (`by_agent` when its own command did it), and an
    engine fault raises `EngineError`: infrastructure, never a verdict."""

    workdir: str

    @property
    def image_id(self) -> str:
        """The engine's id of the image the container runs (its start image, where it has one):
        what holds for one container of it holds for every other."""
        ...


    async def prepare(self, start: StartState, *, files: Mapping[str, str] | None = None, then: str = "",
                      rewrite: Rewrite | None = None) -> str: ...
    """Reach `start` and commit it; `files` go up first, `then` runs after (root shell), and
    its output is returned; `rewrite` is the agent's view of the start state."""
    async def exec(self, cmd: str, timeout: float | None = None, *, user: str | None = None,
                   workdir: str | None = None, output_limit: int | None = None) -> ExecResult: ...
    async def read_file(self, path: str) -> bytes: ...
    async def write_file(self, path: str, data: bytes | str, *, owner: str | None = None) -> None: ...
    async def write_files(self, files: Mapping[str, bytes | str], *, owner: str | None = None) -> None: ...
    """One upload; owned by the sandbox's user unless `owner` is root."""
    async def list_files(self, path: str) -> list[str]: ...
    async def diff(self) -> str: ...
    async def close(self) -> None: ...


class SandboxBackend(Protocol):
    """Where sandboxes live: made from an image, their images, and cleanup by label
    (`factory.sandbox.backend.BACKENDS`; what each part must guarantee: docs/sandbox.md)."""

    name: str

    async def create(self, image: str, config: SandboxConfig, *, workdir: str = "/testbed", run_id: str = "adhoc",
                     attempt_id: str | None = None, network: str | None = None, memory: str | None = None,
                     wait: bool = True, prepare: Preparation | None = None) -> Sandbox: ...
    """A started sandbox of `image` under `config`'s limits and isolation, labelled with the run
    and attempt; its repo is untouched until `prepare`. `wait=False` (root sandboxes only) leaves
    the wait for its start to `prepare`. With `prepare`, it comes back at that start state (as
    `Sandbox.prepare` leaves it; `Preparation.share`: perhaps from an image of it made once)."""

    def image_exists(self, image: str) -> bool: ...
    def build_image(self, plan: RepoImage, base: str, *, root_only: bool = False) -> None: ...
    """A local task set's repo image, made offline from `base` (`factory images build`)."""
    async def pull(self, image: str, note: Callable[[str], None]) -> int: ...
    """One pull of `image` from its registry; its size in bytes. Raises `PullFailed`."""
    async def remove_image(self, image: str) -> None: ...
    """Remove a pulled image's name, with the start images made of it when it was the last."""

    def remove_containers(self, *, run_id: str | None = None, everything: bool = False) -> int: ...
    """`factory clean`: containers of dead owners; of `run_id`; or `everything` of factory's."""
    def reap_run(self, run_id: str) -> int: ...
    """A resumed run's start: the containers its dead processes left."""
    async def remove_left(self, run_id: str) -> int: ...
    """A run's end: every container of the run still there (each one a leak)."""

    # terminal tasks (Harbor): images of their own Dockerfiles, and the agent's final state
    def build_dockerfile_images(self, tasks: list[Task], *, rebuild: bool = False) -> list[tuple[str, str]]: ...
    """The missing images of tasks built from their own Dockerfile, offline; (image, built|present)."""
    async def freeze(self, sandbox: Sandbox, run_id: str, attempt_id: str) -> str: ...
    """The sandbox as it is now, kept as an image (its id), with what changed outside its work
    dir as the engine saw it."""
    async def state_changes(self, state: str) -> list[tuple[str, str]]: ...
    """(kind, path) of what the agent changed outside its work dir, as `freeze` recorded it."""
    async def state_services(self, state: str) -> list[Service]: ...
    """What the agent left running when it stopped (`factory.sandbox.services`), as `freeze` recorded it."""
    async def open_services(self, state: str, *, run_id: str, attempt_id: str, memory: str, cpus: float) -> ServicesRun: ...
    """A container of a frozen state to run its services in, created and not started: offline, its own limits."""
    async def open_state(self, state: str, *, run_id: str, attempt_id: str, memory: str, cpus: float,
                         beside: ServicesRun | None = None) -> StateRun: ...
    """A container of a frozen state, created and not started: root, offline, its own limits; `beside`:
    in the services' network (and nothing else of theirs), so the tests reach them on localhost."""
    async def remove_state(self, state: str) -> None: ...


class StateRun(Protocol):
    """A container of a frozen final state, for the verifier (`factory.verify.final_state`):
    nothing of the image's runs between the verifier and its argv, files are read by the engine."""

    async def start(self) -> None: ...
    async def run(self, argv: list[str], seconds: float, workdir: str = "/") -> Ran: ...
    async def put(self, folder: str, files: dict[str, str], executable: set[str]) -> None: ...
    async def stop(self) -> None: ...
    async def read(self, path: str) -> bytes | None: ...
    async def close(self) -> None: ...


class ServicesRun(StateRun, Protocol):
    """A container of a frozen final state that runs the agent's services for the tests beside it."""

    async def serve(self, services: list[Service], seconds: float) -> list[str]: ...
    """Start them as they were started, in order; wait up to `seconds` for their ports; what did not
    come back, in words (a service that would not start, a port that never listened again)."""


@dataclass(frozen=True)
class Ran:
    exit_code: int | None
    """None: it outlived its time."""
    output: str


class Pool(Protocol):
    """Where the scheduler gets sandboxes: prepared at a task's start state, released when done."""

    backend: SandboxBackend
    """Where its sandboxes live (a terminal task's final state is frozen there)."""

    def prewarm(self, image: str, workdir: str = "/testbed", count: int | None = None) -> None: ...
    async def acquire(self, image: str, start: StartState, *, workdir: str = "/testbed", attempt_id: str,
                      rewrite: Rewrite | None = None, terminal: TerminalSpec | None = None) -> Sandbox: ...
    """`rewrite`: the agent's view of the start state; `terminal`: a terminal task's own limits."""
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
    """How a patch is verified. The executor tells every verifier when an attempt of a task begins
    sampling and when one ended with nothing to verify, so that a verifier may start its work
    ahead (`factory.verify.ahead`); one that starts nothing ahead subclasses this and keeps the
    no-ops, and the executor never asks which kind it holds."""

    async def verify(self, task: Task, patch: str, state: str | None = None) -> Verdict: ...
    """`state`: a terminal task's frozen final state (`Trajectory.final_state`)."""

    def expect(self, task: Task) -> None:
        """An attempt of `task` began sampling: a verification of it may follow."""

    def unexpect(self, task: Task) -> None:
        """An attempt of `task` that was `expect`ed ended with nothing to verify."""


@dataclass
class Sampled:
    trajectory: Trajectory
    node: str | None
    """The machine that ran it: this host's name (local), or the Ray node's id."""


class Executor(Protocol):
    """Where the work of one attempt runs (sandbox, agent loop, and its verification, by a
    `Verifier` the executor holds); the scheduler decides what runs and when, and takes the
    executor made for the run (`factory.executor.open_executor`: local, or a Ray cluster)."""

    late: Any
    """Work past its attempt's deadline, finishing unawaited (`factory.executor.late.LateWork`):
    the scheduler drains it before the run ends, and cancels it on the way out."""

    def prewarm(self, task: Task) -> None: ...
    async def sample(self, task: Task, key: AttemptKey, seed: int, deadline: float) -> Sampled: ...
    async def verify(self, task: Task, patch: str) -> Verdict: ...
    """The verdict of `patch`, from a fresh container where this executor runs work."""
    def done_with(self, image: str) -> None: ...


class Filter(Protocol):
    """A pure stage: keeps attempts, and names a reason for every one it drops."""

    name: str

    def apply(self, attempts: list[Attempt]) -> tuple[list[Attempt], list[tuple[Attempt, str]]]: ...


class Renderer(Protocol):
    def render(self, messages: list[Message], tools: list[dict[str, Any]]) -> Any: ...
