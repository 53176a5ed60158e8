"""Harnesses: the tools and prompts an attempt runs with. A student trained on one tool schema
learns that scaffold, so a run can sample several (`agent.harnesses`) and each row says which.

    factory          bash(command, timeout?), str_replace_editor(command, path, ...), submit()
    mini-swe-agent   bash(command) alone, as mini-swe-agent's tool-call mode has it; the attempt
                     ends with the command `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`, its
                     submission sentinel, and the sandbox's diff is the patch as always
    swe-agent        SWE-agent's default tool names and argument schemas: bash(command),
                     str_replace_editor(command, path, file_text, old_str, new_str, insert_line,
                     view_range), submit(); its prompt layout (`<uploaded_files>`,
                     `<pr_description>`) and its `OBSERVATION:` before each tool result

`pick(harnesses, index)` gives attempt `index` its harness: deterministic (a resumed attempt
gets the same one), in the pipeline's shares over a task's attempts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from factory.agent.config import HARNESSES, HarnessShare
from factory.agent.prompts import INSTANCE_TEMPLATE, SYSTEM_TEMPLATE
from factory.agent.tools import (
    BASH,
    EDITOR,
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
You work in a checkout of the {language} repository {repo} at {workdir}, without network access \
(the sandbox has {toolchain}), through one tool: `bash`, which runs a command in a new shell in {workdir} (`cd` and variables do not \
carry over). Fix the issue by changing the source code; do not change the tests. When you are \
done, run `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` as a command on its own: your changes \
to the repository, as they are then, are your answer."""

MINI_INSTANCE = INSTANCE_TEMPLATE.replace("6. Call `submit`.", f"6. Run `{SUBMIT_COMMAND}` on its own.")


_EDITOR_ARGS: dict[str, Any] = {
    "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "undo_edit"],
                "description": "One of view, create, str_replace, insert, undo_edit."},
    "path": {"type": "string", "description": "Absolute path of a file or directory, e.g. /testbed/a.py."},
    "file_text": {"type": "string", "description": "create: the content of the new file."},
    "old_str": {"type": "string", "description": "str_replace: the exact text to replace, once in the file."},
    "new_str": {"type": "string", "description": "str_replace: the new text; insert: the text to insert."},
    "insert_line": {"type": "integer", "description": "insert: the line after which new_str goes."},
    "view_range": {"type": "array", "items": {"type": "integer"},
                   "description": "view: [first, last] line to show, 1-based; last -1 for the end."},
}

SWE_AGENT_TOOLS: list[dict[str, Any]] = [
    function_schema(BASH, "Run a bash command in the shell.", {"command": {"type": "string",
                    "description": "The command to run."}}, ["command"]),
    function_schema(EDITOR, "View, create and edit files: view shows a file like `cat -n` or lists a "
                    "directory two levels deep; create makes a new file; str_replace swaps one exact "
                    "unique string; insert adds text after a line; undo_edit reverts the last edit.",
                    _EDITOR_ARGS, ["command", "path"]),
    function_schema(SUBMIT, "Submit your changes to the repository as the solution.", {}, []),
]

SWE_AGENT_SYSTEM = "You are a helpful assistant that can interact with a computer to solve tasks."

SWE_AGENT_INSTANCE = """<uploaded_files>
{workdir}
</uploaded_files>
I've uploaded a {language} code repository in the directory {workdir}. Consider the following PR description:

<pr_description>
{problem_statement}
</pr_description>

Can you help me implement the necessary changes to the repository so that the requirements specified in the <pr_description> are met? The tests are already taken care of: do not modify any test files. Make minimal changes to non-test files in {workdir}.
1. Find and read the code relevant to the PR description.
2. Write a script that reproduces the problem and run it through the bash tool (the repository's tests run with `{test_command}`).
3. Edit the source code to resolve it.
4. Rerun your script to confirm the fix.
5. Think about edge cases and make sure your fix handles them.
6. Call `submit`."""


@dataclass(frozen=True)
class Harness:
    name: str
    tools: list[dict[str, Any]]
    system_template: str
    instance_template: str
    submit_command: str | None = None
    """The bash command that submits, for a bash-only harness; None: the `submit` tool does."""
    observation_prefix: str = ""
    """Put before each tool result (SWE-agent's `OBSERVATION:`)."""
    loose_arguments: bool = True
    """Arguments outside a tool's schema are ignored (factory's own tools) rather than format errors."""

    def parse(self, call: ToolCall) -> Action:
        """The call checked against this harness's tools, or `MalformedCall` (a format error)."""
        if self.submit_command is None:
            action = parse_call(call)
            schema = next(t["function"]["parameters"] for t in self.tools if t["function"]["name"] == call.name)
            unknown = sorted(set(action.args) - set(schema["properties"]))
            if unknown and not self.loose_arguments:
                raise MalformedCall(f"{call.name}: unknown argument {unknown[0]!r}")
            return action
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
SWE_AGENT = Harness("swe-agent", SWE_AGENT_TOOLS, SWE_AGENT_SYSTEM, SWE_AGENT_INSTANCE,
                    observation_prefix="OBSERVATION:\n", loose_arguments=False)
HARNESSES.add(FACTORY.name, FACTORY)
HARNESSES.add(MINI_SWE_AGENT.name, MINI_SWE_AGENT)
HARNESSES.add(SWE_AGENT.name, SWE_AGENT)


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
            return HARNESSES.get(share.name)
    return HARNESSES.get(harnesses[-1].name)


def fit(tools: list[dict[str, Any]], name: str, args: dict[str, Any] | str) -> tuple[str, dict[str, Any] | str]:
    """A call for factory's tools said with `tools` (how the scripted teacher works in any harness):
    with bash alone (`as_bash`), or without the arguments those tools' schemas do not have."""
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    if EDITOR not in schemas:
        return as_bash(name, args)
    if isinstance(args, str) or name not in schemas:  # a malformed call stays malformed
        return name, args
    return name, {k: v for k, v in args.items() if k in schemas[name].get("properties", {})}


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
