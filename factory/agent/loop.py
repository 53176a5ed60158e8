"""The agent loop: one attempt of a teacher on a task in a prepared sandbox, as a `Trajectory`.

    prompts ─► teacher turn ─► limits ─► tool calls checked ─► run in order ─► next turn …
                                                                  └─ submit ─► patch = sandbox.diff()

Exits: `submitted` (the model called `submit`, or answered without any tool call),
`max_turns`, `max_tokens` and `budget` (checked after each turn, before its tool calls
run), `timeout` (wall time, at any point), `format_error` (a malformed tool call, after
`format_error_retries` re-prompts), `crashed` (its own command brought the sandbox down),
`sandbox_error` (infrastructure), `teacher_error`. Whatever the exit, the
patch is the sandbox's diff at that moment, unless the sandbox died.

A teacher that needs its task (the offline scripted teacher) has `session(task, seed)`; it
is called once per attempt and the loop talks to the teacher it returns.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time

from factory.agent.config import AgentConfig
from factory.agent.editor import Editor
from factory.agent.harness import FACTORY, Harness
from factory.agent.prompts import render_prompts
from factory.agent.toolchain import shell_setup
from factory.agent.tools import BASH, Action, MalformedCall, describe_result, exec_bash, truncate
from factory.errors import SandboxCrashed, SandboxError, TeacherError
from factory.protocols import Sandbox, Teacher
from factory.records import Exit, Message, Task, ToolCall, ToolRun, Trajectory, Turn

log = logging.getLogger("factory.agent")

Ending = tuple[Exit, str | None]


async def run_agent(
    task: Task, teacher: Teacher, sandbox: Sandbox, config: AgentConfig, *, attempt_seed: int = 0,
    deadline: float | None = None, harness: Harness = FACTORY,
) -> Trajectory:
    """Run one attempt. Model and sandbox trouble end it with an exit, never an exception;
    cancellation propagates. The sandbox is left open for the caller to close.

    `deadline` (`time.monotonic()`): when exit `timeout` comes; by default `max_wall_seconds`
    from now (the scheduler starts the clock earlier, at sandbox start). `harness`: the tools
    and default prompts (factory.agent.harness), recorded on the trajectory."""
    started = time.monotonic()
    opener = getattr(teacher, "session", None)
    model: Teacher = opener(task, attempt_seed) if callable(opener) else teacher
    attempt = _Attempt(task, model, sandbox, config, harness, deadline=deadline or started + config.max_wall_seconds)
    exit, error = await attempt.run()
    patch = ""
    if not attempt.sandbox_died and not getattr(sandbox, "closed", False):
        try:
            patch = await sandbox.diff()
        except SandboxError as exc:
            if exit is not Exit.sandbox_error:
                exit, error = Exit.sandbox_error, _describe(exc)
    scrub = getattr(model, "scrub", None)
    if error is not None and callable(scrub):
        error = scrub(error)
    trajectory = Trajectory(
        instance_id=task.instance_id,
        teacher=model.name,
        model=model.model,
        messages=attempt.messages,
        tools=copy.deepcopy(harness.tools),
        patch=patch,
        exit=exit,
        error=error,
        turns=attempt.turns,
        wall_seconds=time.monotonic() - started,
        scripted=bool(getattr(model, "scripted", False)),
        harness=harness.name,
    )
    log.info(
        "%s with %s: %s after %d turns, %.1fs%s",
        task.instance_id,
        model.name,
        exit.value,
        len(attempt.turns),
        trajectory.wall_seconds,
        f" ({error})" if error else "",
    )
    return trajectory


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class _Attempt:
    def __init__(
        self, task: Task, model: Teacher, sandbox: Sandbox, config: AgentConfig, harness: Harness, deadline: float
    ):
        self.model, self.sandbox, self.config, self.deadline = model, sandbox, config, deadline
        self.harness = harness
        system, instance = render_prompts(task, sandbox.workdir, config, harness.system_template,
                                          harness.instance_template)
        self.messages = [
            Message(role="system", content=system),
            Message(role="user", content=instance),
        ]
        self.turns: list[Turn] = []
        self.editor = Editor(sandbox)
        self.tokens = 0
        self.cost = 0.0
        self.format_errors = 0
        self.sandbox_died = False
        self.shell_setup = shell_setup(task)  # the task's environment (conda's testbed, REPORT_DIR) in every shell

    async def run(self) -> Ending:
        scope = asyncio.timeout(max(self.deadline - time.monotonic(), 0.0))
        try:
            async with scope:
                return await self._converse()
        except TimeoutError:
            if not scope.expired():
                raise
            return Exit.timeout, None
        except SandboxError as exc:
            self.sandbox_died = isinstance(exc, SandboxCrashed)
            by_agent = self.sandbox_died and exc.by_agent
            return (Exit.crashed if by_agent else Exit.sandbox_error), _describe(exc)
        except TeacherError as exc:
            return Exit.teacher_error, _describe(exc)

    async def _converse(self) -> Ending:
        while True:
            if len(self.turns) >= self.config.max_turns:
                return Exit.max_turns, None
            message = await self._ask()
            if (limit := self._over_limit()) is not None:
                return limit, None
            if not message.tool_calls:
                return Exit.submitted, None
            actions, problems = _check(self.harness, message.tool_calls)
            if problems:
                self.format_errors += 1
                if self.format_errors > self.config.format_error_retries:
                    return Exit.format_error, f"FormatError: {next(p for p in problems if p)}"
                for call, problem in zip(message.tool_calls, problems, strict=True):
                    self._reply(call, _reprompt(problem))
                continue
            for action in actions:
                if self.harness.submits(action):
                    return Exit.submitted, None
                output, ran = await self._act(action)
                self.turns[-1].tool_runs.append(ran)
                self._reply(action.call, self.harness.observation_prefix + truncate(output, self.config.output_limit))

    async def _ask(self) -> Message:
        began = time.monotonic()
        completion = await self.model.complete(list(self.messages), self.harness.tools)
        self.messages.append(completion.message)
        u = completion.usage
        self.tokens += u.input_tokens + u.cache_read_tokens + u.cache_write_tokens + u.output_tokens
        self.cost += completion.cost_usd or 0.0
        # a turn is the completion's accounting (every field they share), timed as the loop saw it
        accounting = completion.model_dump(include=set(Turn.model_fields))
        self.turns.append(Turn.model_validate({**accounting, "seconds": time.monotonic() - began}))
        return completion.message

    def _over_limit(self) -> Exit | None:
        if self.tokens > self.config.max_tokens:
            return Exit.max_tokens
        if self.config.max_cost_usd is not None and self.cost > self.config.max_cost_usd:
            return Exit.budget
        return None

    async def _act(self, action: Action) -> tuple[str, ToolRun]:
        """The tool's output for the model, and what running it did (for the warehouse)."""
        began = time.monotonic()
        if action.tool == BASH:
            cap = min(self.config.command_timeout, max(1.0, self.deadline - time.monotonic()))
            result, timeout = await exec_bash(self.sandbox, action.args, cap, setup=self.shell_setup)
            output = describe_result(result, timeout)
            # the whole output's size: the sandbox cut what it did not keep
            ran = ToolRun(call_id=action.call.id, exit_code=result.exit_code, timed_out=result.timed_out,
                          output_bytes=len(result.output.encode()) + result.truncated_bytes)
        else:
            output = await self.editor.run(action.args)
            ran = ToolRun(call_id=action.call.id, output_bytes=len(output.encode()))
        return output, ran.model_copy(update={"seconds": time.monotonic() - began})

    def _reply(self, call: ToolCall, content: str) -> None:
        self.messages.append(
            Message(role="tool", tool_call_id=call.id, name=call.name, content=content)
        )


def _check(harness: Harness, calls: list[ToolCall]) -> tuple[list[Action], list[str | None]]:
    """The calls as actions, or (when any is malformed) what is wrong with each (None: nothing)."""
    actions: list[Action] = []
    problems: list[str | None] = []
    for call in calls:
        try:
            actions.append(harness.parse(call))
            problems.append(None)
        except MalformedCall as exc:
            problems.append(str(exc))
    return actions, problems if any(problems) else []


def _reprompt(problem: str | None) -> str:
    if problem is None:
        return "Not run: another tool call of this turn was malformed. Call the tools again."
    return f"Error: malformed tool call ({problem}). Nothing of this turn was run; call the tool again with valid arguments."
