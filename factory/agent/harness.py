"""Harnesses: the tools and prompts an attempt runs with. A student trained on one tool schema
learns that scaffold, so a run can sample several (`agent.harnesses`) and each row says which.

    factory          bash(command, timeout?), str_replace_editor(command, path, ...), submit()
    mini-swe-agent   bash(command) alone, as mini-swe-agent's tool-call mode has it; the attempt
                     ends with the command `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`, its
                     submission sentinel, and the sandbox's diff is the patch as always

`pick(harnesses, index)` gives attempt `index` its harness: deterministic (a resumed attempt
gets the same one), in the pipeline's shares over a task's attempts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from factory.agent.config import HarnessShare
from factory.agent.prompts import INSTANCE_TEMPLATE, SYSTEM_TEMPLATE
from factory.agent.tools import (
    BASH,
    SUBMIT,
    TOOLS,
    Action,
    MalformedCall,
    function_schema,
    parse_call,
)
from factory.records import ToolCall

SENTINEL = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
SUBMIT_COMMAND = f"echo {SENTINEL}"

MINI_TOOLS: list[dict[str, Any]] = [
    function_schema(BASH, "Execute a bash command in the repository. Each command runs in a new shell.",
                    {"command": {"type": "string", "description": "The bash command to execute."}}, ["command"]),
]

MINI_SYSTEM = """\
You are a helpful assistant that can interact with a computer shell to solve programming tasks. \
You work in a checkout of the repository {repo} at {workdir}, without network access, through \
one tool: `bash`, which runs a command in a new shell in {workdir} (`cd` and variables do not \
carry over). Fix the issue by changing the source code; do not change the tests. When you are \
done, run `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` as a command on its own: your changes \
to the repository, as they are then, are your answer."""

MINI_INSTANCE = INSTANCE_TEMPLATE.replace("6. Call `submit`.", f"6. Run `{SUBMIT_COMMAND}` on its own.")


@dataclass(frozen=True)
class Harness:
    name: str
    tools: list[dict[str, Any]]
    system_template: str
    instance_template: str
    submit_command: str | None = None
    """The bash command that submits, for a bash-only harness; None: the `submit` tool does."""

    def parse(self, call: ToolCall) -> Action:
        """The call checked against this harness's tools, or `MalformedCall` (a format error)."""
        if self.submit_command is None:
            return parse_call(call)
        if call.name != BASH:
            raise MalformedCall(f"unknown tool {call.name!r}; the only tool is bash")
        action = parse_call(call)  # bash's own checks (JSON object, a string command)
        if set(action.args) - {"command"}:
            raise MalformedCall(f"bash: unknown argument {sorted(set(action.args) - {'command'})[0]!r}")
        return action

    def submits(self, action: Action) -> bool:
        """Whether this action ends the attempt as submitted (it does not run)."""
        if self.submit_command is None:
            return action.tool == SUBMIT
        return action.tool == BASH and action.args["command"].strip() == self.submit_command


FACTORY = Harness("factory", TOOLS, SYSTEM_TEMPLATE, INSTANCE_TEMPLATE)
MINI_SWE_AGENT = Harness("mini-swe-agent", MINI_TOOLS, MINI_SYSTEM, MINI_INSTANCE, SUBMIT_COMMAND)
HARNESSES = {h.name: h for h in (FACTORY, MINI_SWE_AGENT)}


_GOLDEN = 0.6180339887498949


def pick(harnesses: Sequence[HarnessShare], index: int) -> Harness:
    """The harness of a task's attempt `index`: the golden-ratio sequence over the shares, so
    any run of consecutive attempts is spread in proportion (index 0 takes the first harness)."""
    if not harnesses:
        return FACTORY
    total = sum(h.share for h in harnesses)
    point = (index * _GOLDEN) % 1.0 * total
    for share in harnesses:
        point -= share.share
        if point < 0:
            return HARNESSES[share.name]
    return HARNESSES[harnesses[-1].name]


def as_bash(name: str, args: dict[str, Any] | str) -> tuple[str, dict[str, Any] | str]:
    """A call for factory's tools said with bash alone (how the scripted teacher works in the
    mini-swe-agent harness): views print lines, edits rewrite the file, submit is the sentinel."""
    if isinstance(args, str) or name == BASH:  # a malformed call stays malformed
        return BASH, args if isinstance(args, str) else {"command": args["command"]}
    if name == SUBMIT:
        return BASH, {"command": SUBMIT_COMMAND}
    path = args.get("path", "")
    command = args.get("command")
    if command == "view":
        start, end = (args.get("view_range") or [1, -1])[:2]
        span = f"{start},$p" if end == -1 else f"{start},{end}p"
        return BASH, {"command": f"if [ -d {json.dumps(path)} ]; then find {json.dumps(path)} -maxdepth 2 -not -path '*/.*'; "
                                 f"else cat -n {json.dumps(path)} | sed -n '{span}'; fi"}
    edit = {"command": command, "path": path, **{k: v for k, v in args.items() if k not in ("command", "path")}}
    return BASH, {"command": f"python3 -c {_quote(_EDIT_SCRIPT)} {_quote(json.dumps(edit))}"}


_EDIT_SCRIPT = """\
import json, pathlib, sys
a = json.loads(sys.argv[1]); p = pathlib.Path(a["path"])
if a["command"] == "create":
    p.write_text(a["file_text"])
elif a["command"] == "str_replace":
    p.write_text(p.read_text().replace(a["old_str"], a.get("new_str", ""), 1))
elif a["command"] == "insert":
    lines = p.read_text().splitlines(True); n = a["insert_line"]; new = a["new_str"]
    p.write_text("".join(lines[:n]) + new + ("" if new.endswith("\\n") else "\\n") + "".join(lines[n:]))
print("edited", p)
"""


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"
