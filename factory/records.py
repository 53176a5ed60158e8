"""The records that flow between stages (DESIGN.md, "Records").

Tasks go in, trajectories come out of the agent loop, verdicts out of the verifier.
Every record is a pydantic model so it round-trips through JSON unchanged.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------- tasks


class StartState(Record):
    """How to reach the task's start state inside its image (applied by the sandbox)."""

    bug_patch: str = ""
    """SWE-smith: the diff that introduces the bug, applied on top of the image's repo."""
    base_commit: str | None = None
    """SWE-bench / SWE-Gym: the commit the image's repo must be at."""
    hide_paths: list[str] = Field(default_factory=list)
    """Files removed from the agent's view (SWE-smith: the FAIL_TO_PASS test files)."""


class TestSpec(Record):
    """How a task's tests run and are read: the test framework's part of a task."""

    __test__ = False  # not a pytest test class

    framework: str = "pytest"
    """The test framework that runs and reads them (`factory.verify.frameworks`): `pytest`, or
    `command`: any runner whose report a result reader reads (`go test -json`, jest, JUnit, cargo)."""
    command: str = ""
    """`command`: the shell command that runs the tests in the repo as the tests' user, e.g.
    `go test -json ./...`; it may write its report to `report`."""
    results: str = ""
    """`command`: the result reader of its report (`factory.verify.results`): `go-json`, `junit`, `cargo`, ..."""
    report: str = ""
    """`command`: the file the command writes its report to, relative to `$REPORT_DIR` (an empty
    folder of the tests' own, outside the repo); empty: the report is the command's output."""
    as_root: bool = False
    """`command`: run as root in a writable repo, for runners that write into it or read root's
    caches (Maven's ~/.m2, Gradle, a task set's own run script). Weaker: the code under test is
    root in the container; the verdict says so."""


class TerminalSpec(Record):
    """A task judged by the final state of its machine, not by a patch (Harbor, Terminal-Bench 1):
    its hidden tests run in a fresh container made from the agent's frozen final state
    (`factory.verify.final_state`)."""

    tests: dict[str, str] = Field(default_factory=dict)
    """The hidden tests, path under `/tests` -> text; uploaded only when the agent has stopped."""
    script: str = "test.sh"
    """The entry of `tests` the verifier runs (Harbor's `test.sh`, Terminal-Bench 1's `run-tests.sh`)."""
    reward_from_exit: bool = False
    """Terminal-Bench 1: the script writes no reward file; exit 0 is reward 1.0, any other 0.0."""
    solution: dict[str, str] = Field(default_factory=dict)
    """The reference solution, path under `/solution` -> text; `solve.sh` is its entry."""
    verifier_seconds: float = 600.0
    """Seconds the test script may run."""
    agent_seconds: float | None = None
    """Seconds the agent may work (the task's own limit; the pipeline's applies too)."""
    cpus: float | None = None
    memory_mb: int | None = None
    network: bool = False
    """Whether the task allows the internet; the verification is offline whatever it says."""
    verifier_env: dict[str, str] = Field(default_factory=dict)
    """Variables the task gives its test script (added to the verifier's clean environment)."""
    build: str = ""
    """The folder whose `Dockerfile` builds `Task.image` (`factory images build`); empty: the image is named."""


class Task(Record):
    instance_id: str
    repo: str
    problem_statement: str
    image: str
    workdir: str = "/testbed"
    start: StartState = Field(default_factory=StartState)
    gold_patch: str = ""
    """The reference fix: a diff from the start state to solved."""
    alt_fixes: list[str] = Field(default_factory=list)
    """Other correct fixes, diffs from the start state as `gold_patch` is, validated like it
    (`factory tasks validate`); the scripted teacher solves with any of them."""
    test_patch: str = ""
    """Hidden tests added only at verification (SWE-bench style)."""
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    test_cmd: str | None = None
    """Shell prefix that makes the test environment (e.g. conda activate); None = image default."""
    language: str = "python"
    """The repo's main language, as task sets name it (`python`, `go`, `javascript`, `typescript`, `java`, `rust`, ...)."""
    tests: TestSpec = Field(default_factory=TestSpec)
    """How the hidden tests run and are read; FAIL_TO_PASS and PASS_TO_PASS are that framework's
    test names (pytest node ids, Go `TestX/sub`, JUnit `Class#method` or `class.name`, cargo `mod::test`)."""
    source: str = ""
    """Which task set and format the task came from, e.g. 'swesmith:path/tasks.jsonl'."""
    test_seconds: float | None = None
    """How long verifying the gold fix took when the task set was validated; sets the
    verification timeout (None: the verifier's flat `timeout`)."""
    fails_at: dict[str, int] = Field(default_factory=dict)
    """FAIL_TO_PASS test id -> the top-level statement of its body at which it failed when the
    task set was validated (the empty patch); the verifier's controls differ from their originals
    at or after it, so that under the unfixed code both fail alike."""
    terminal: TerminalSpec | None = None
    """Set for a task judged by its final state (Harbor, Terminal-Bench); None: judged by its patch."""


# ---------------------------------------------------------------------- trajectories


class ToolCall(Record):
    id: str
    name: str
    arguments: str
    """JSON text exactly as the teacher produced it (may be invalid: that is a format error)."""


class Message(Record):
    """One chat message in OpenAI layout; `reasoning` carries thinking text where a teacher gives it."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    reasoning: str | None = None
    provider_blocks: list[dict[str, Any]] | None = None
    """Opaque provider content kept for continuity (Anthropic thinking signatures)."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        """The TRL / OpenAI chat layout: tool-call arguments stay JSON strings."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.reasoning is not None:
            out["reasoning_content"] = self.reasoning
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id
            if self.name:
                out["name"] = self.name
        return out


class Usage(Record):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(**{k: getattr(self, k) + getattr(other, k) for k in Usage.model_fields})


class Exit(StrEnum):
    submitted = "submitted"
    max_turns = "max_turns"
    max_tokens = "max_tokens"
    format_error = "format_error"
    timeout = "timeout"
    sandbox_error = "sandbox_error"
    """Infrastructure: the engine failed or someone else removed the container."""
    teacher_error = "teacher_error"
    budget = "budget"
    crashed = "crashed"
    """The agent's own command brought its sandbox down (killed its keepalive, ran it out of
    memory): the model's failure, never retried, since a replay would crash the same way."""


INFRA_EXITS = (Exit.sandbox_error, Exit.teacher_error)
"""Exits where infrastructure, not the model, ended the sampling: the attempt is sampled again."""


class SampledTokens(Record):
    """The tokens a server sampled for one turn, as it reports them (vLLM's `return_token_ids`,
    `logprobs` with `return_tokens_as_token_ids`): what an RL trainer needs to score the turn
    without tokenizing its text again, which can split it differently."""

    completion_token_ids: list[int]
    """The sampled ids, in order (a stop token included when the server reports it)."""
    logprobs: list[float] | None = None
    """The log-probability of each sampled id under the sampling policy; None when not returned."""
    prompt_token_ids: list[int] | None = None
    """The ids of the prompt the server rendered for this turn; None when not returned."""


class ToolRun(Record):
    """What running one tool call did: the agent loop measures it; the message holds the output."""

    call_id: str
    exit_code: int | None = None
    """The shell's exit code; None for a tool that is not a shell command (the editor) or a
    command killed at its timeout."""
    output_bytes: int = 0
    """UTF-8 bytes of the whole output, before the loop cut it to `output_limit` for the model."""
    seconds: float = 0.0
    timed_out: bool = False


class Turn(Record):
    """Accounting for one teacher call; the message itself is in Trajectory.messages."""

    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    """None when the model has no known price (never 0 by default)."""
    seconds: float = 0.0
    retries: int = 0
    stop_reason: str = ""
    """Why the model stopped this turn, as its API says it (`stop`, `tool_calls`, `length`, `end_turn`)."""
    sampled: SampledTokens | None = None
    """The turn's token ids and logprobs, when the teacher records them (`record_tokens`)."""
    tool_runs: list[ToolRun] = Field(default_factory=list)
    """The tool calls of this turn that ran, in order (none for a malformed turn or `submit`)."""


class PossiblyBilled(Record):
    """A paid request that was sent but never answered in this record: the process was killed,
    or the call cancelled (a timeout, a second Ctrl-C), while it was in flight. The provider may
    have billed it; the bounds were taken when it was sent (`factory.executor.journal`)."""

    turn: int
    """Which teacher call of the attempt it was (0 = the first)."""
    max_input_tokens: int
    """The UTF-8 bytes of the messages and tool schemas sent: a token is at least one byte."""
    max_output_tokens: int | None = None
    """The teacher's `max_tokens`; None when the teacher has none."""
    max_cost_usd: float | None = None
    """Those tokens at the teacher's price (input at its dearest rate); None when unknown."""


class Trajectory(Record):
    instance_id: str
    teacher: str
    model: str
    messages: list[Message]
    tools: list[dict[str, Any]] = Field(default_factory=list)
    patch: str = ""
    exit: Exit
    error: str | None = None
    turns: list[Turn] = Field(default_factory=list)
    wall_seconds: float = 0.0
    scripted: bool = False
    """True when an offline scripted teacher produced it; such data is labelled everywhere."""
    harness: str = "factory"
    """The harness the agent ran in (its tools and prompts); `factory` is the built-in bash,
    editor and submit."""
    possibly_billed: list[PossiblyBilled] = Field(default_factory=list)
    """Paid requests of this attempt cut off in flight (by a kill, a cancel or a timeout): in
    neither `turns` nor `cost_usd`, yet perhaps billed."""
    final_state: str | None = None
    """A terminal task's: the image the agent's container was frozen into when it stopped (on the
    engine that sampled it, removed once verified); None for a task judged by its patch."""
    problem_statement: str | None = None
    """The task as an imported file states it (`factory import` without a task source makes its
    task from it); None for factory's own runs, whose task is in the task set."""

    @property
    def usage(self) -> Usage:
        return sum((t.usage for t in self.turns), Usage())

    @property
    def cost_usd(self) -> float | None:
        costs = [t.cost_usd for t in self.turns]
        return None if any(c is None for c in costs) else sum(costs)  # type: ignore[misc]

    @property
    def possibly_billed_usd(self) -> float | None:
        """The most the requests cut off in flight can have cost; None when one's price is unknown."""
        costs = [p.max_cost_usd for p in self.possibly_billed]
        return None if any(c is None for c in costs) else sum(costs)  # type: ignore[misc]


# ---------------------------------------------------------------------------- verdicts


class TestStatus(StrEnum):
    __test__ = False  # not a pytest test class

    passed = "passed"
    failed = "failed"
    error = "error"
    skipped = "skipped"
    xfailed = "xfailed"
    missing = "missing"


class Reason(StrEnum):
    patch_rejected = "patch_rejected"
    patch_failed = "patch_failed"
    tests_failed = "tests_failed"
    timeout = "timeout"
    no_report = "no_report"
    tampered = "tampered"
    sandbox_error = "sandbox_error"


class Check(StrEnum):
    """Which of the verifier's checks decided a verdict."""

    policy = "policy"
    """The diff policy refused the patch before anything ran."""
    apply = "apply"
    """git could not read or apply the patch."""
    controls = "controls"
    """A control (a mutated copy of a hidden test) did not fail."""
    tamper_probe = "tamper_probe"
    """The report stream was forged, or objects equal to anything were found."""
    tests = "tests"
    """The hidden tests: passed, failed, timed out or never finished reporting."""


class FlagKind(StrEnum):
    """What a verdict flag is about. Filters and queries read the kind; people read the detail."""

    refused = "refused"
    """Why the patch was refused (its verdict is `patch_rejected`)."""
    dropped_test_configuration = "dropped test configuration"
    dropped_packaging_configuration = "dropped test configuration in packaging file"
    dropped_test_change = "dropped test change"
    dropped_binary = "dropped binary file"
    dropped_same_name = "dropped with a left-out section of the same name"
    library_test_support = "changes library test support"
    static = "static"
    """Something in the patch's added lines a reviewer may want to see (never a drop on its own)."""
    weak_controls = "weak controls"
    no_copies = "no copies"
    """FAIL_TO_PASS tests the verification ran without a copy of (no site a change surely fails):
    a forger that flips their failures must still tell them from the canary, nothing more."""
    """A forger could tell some controls from the tests they copy (`docs/verify.md`)."""
    equal_as_it_was = "equal to anything as it was"
    """A class whose `__eq__` is true against anything, in a file the patch touched, as the repo
    had it (an expression builder's): every yes ran code the patch left alone, so the verifier let
    it be (`docs/verify.md`)."""
    altered_machinery = "altered test machinery"
    """The reporting plugin saw the test machinery changed while the tests ran: never taught."""
    reused = "reused verdict of an identical patch"
    flaky = "flaky"
    """A hidden test that passed only when its runner ran it again."""
    altered_system = "altered system files"
    """A terminal task's final state changed a shell, interpreter, loader or start-up hook the
    tests rely on (`factory.verify.final_state`)."""
    stale_reward = "reward left by the agent"
    """The final state already held a reward or verifier log; the verifier removed it."""
    services = "services"
    """The services a terminal task's agent left running, started again beside its tests (and any
    that did not come back): the tests judged the agent's own running code (docs/verify.md)."""
    left_running = "left running by the tests"
    """Processes a terminal task's test script (or what it ran) left behind: killed when it ended,
    and the reward not taken, as one of them may have written it."""
    other = "other"
    """A flag of an older record that names none of the above."""


class VerdictFlag(Record):
    """One thing a reviewer should see in a verdict; written `kind: detail`."""

    kind: FlagKind
    detail: str = ""

    def __str__(self) -> str:
        if self.kind is FlagKind.other:  # an older record's own words
            return self.detail
        return f"{self.kind.value}: {self.detail}" if self.detail else self.kind.value

    @classmethod
    def read(cls, text: str) -> VerdictFlag:
        """A flag as records before typed flags wrote it (`kind: detail`, one string)."""
        for kind in sorted(FlagKind, key=lambda k: -len(k.value)):  # the longest kind that fits
            if text == kind.value or text.startswith(f"{kind.value}: "):
                return cls(kind=kind, detail=text[len(kind.value) + 2:])
        return cls(kind=FlagKind.other, detail=text)


class VerifiedBy(StrEnum):
    """Who judged that an attempt's patch solves its task."""

    factory = "factory"
    """factory's verifier: the hidden tests in a fresh container, as `docs/verify.md` says."""
    source = "source"
    """The trajectories' source, taken at its word (`factory import --trust-source` of rows that hold
    no patch): factory ran no test. Every output says so; such rows are never counted as factory's."""


class Guarantee(StrEnum):
    """What a verdict's `resolved` rests on (`docs/verify.md`)."""

    patch = "patch"
    """Only the agent's diff, applied in a fresh container at the start state."""
    final_state = "final-state"
    """The tests ran in a fresh container made from the agent's frozen final state: the agent
    chose that state (its files, its programs), so this is weaker."""


class Verdict(Record):
    resolved: bool
    verified_by: VerifiedBy = VerifiedBy.factory
    reason: Reason | None = None
    decided_by: Check | None = None
    detail: str = ""
    tests: dict[str, TestStatus] = Field(default_factory=dict)
    flags: list[VerdictFlag] = Field(default_factory=list)
    """Things a reviewer should see: dropped test hunks, suspicious code, weak controls, ..."""
    controls: int = 0
    """Control tests run among the hidden tests (copies that must fail); 0 when no test ran."""
    fails_at: dict[str, int] = Field(default_factory=dict)
    """FAIL_TO_PASS test id -> the top-level statement of its body that raised, for those that
    failed (as the test process reports it: worth keeping only from a patch the factory trusts,
    such as validation's empty patch, where it becomes `Task.fails_at`)."""
    seconds: float = 0.0
    reward: float | None = None
    """A terminal task's reward as its tests wrote it; `resolved` is it reaching the threshold."""
    guarantee: Guarantee = Guarantee.patch
    """What `resolved` rests on."""

    @field_validator("flags", mode="before")
    @classmethod
    def _read_flags(cls, flags: Any) -> Any:
        """Verdicts saved before flags were typed hold `kind: detail` strings: read them."""
        if isinstance(flags, list):
            return [VerdictFlag.read(f) if isinstance(f, str) else f for f in flags]
        return flags

    def flagged(self, kind: FlagKind) -> list[VerdictFlag]:
        return [f for f in self.flags if f.kind is kind]


# ---------------------------------------------------------------------------- teacher turns


class Completion(Record):
    """One assistant turn from a teacher, with what it cost."""

    message: Message
    stop_reason: str = ""
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    retries: int = 0
    seconds: float = 0.0
    sampled: SampledTokens | None = None
    """Token ids and logprobs as the server sampled them, when the teacher asked for them."""


# ---------------------------------------------------------------------------- attempts


class AttemptKey(Record):
    """Identity of one attempt; writing the same key twice is harmless (DESIGN.md)."""

    run_id: str
    instance_id: str
    teacher: str
    index: int


class Attempt(Record):
    """One finished attempt: what the agent did and what the verifier said."""

    key: AttemptKey
    repo: str = ""
    trajectory: Trajectory | None = None
    verdict: Verdict | None = None
    error_class: str | None = None
    """Set when infrastructure (sandbox, teacher outage) ended the attempt after its retries."""
    infra_failures: list[str] = Field(default_factory=list)
    """Infrastructure failures that were retried before this outcome (never counted as the model's)."""
    started_at: datetime | None = None
    finished_at: datetime | None = None
    node: str | None = None
    """The machine that sampled it: the host's name (local executor) or the Ray node's id."""

    @property
    def outcome(self) -> str:
        """The attempt's one label, as the warehouse's `v_attempts.outcome` spells it:
        `error:<class>` (infrastructure), `resolved`, `unresolved:<reason>`, `unverified:<exit>`."""
        if self.error_class:
            return f"error:{self.error_class}"
        if self.verdict is not None and self.verdict.resolved:
            return "resolved"
        if self.verdict is not None and self.verdict.reason is not None:
            return f"unresolved:{self.verdict.reason.value}"
        return f"unverified:{self.trajectory.exit.value if self.trajectory else 'no_trajectory'}"
