"""A scripted agent's turns: what an agent that knows the task's gold fix does, per outcome.

The scripted teacher (factory/teachers/scripted.py) plays these turns back through the real
tools; everything here is a pure function of the task, the outcome and a seeded `Random`. It acts
in the task's language (factory/agent/toolchain.py): it finds and greps that language's files,
reads the definition around the fix, and checks with the task's own test command (pytest for a
pytest task, `go test -json ./...`, cargo, a task set's run script, ... for a `command` task).

    explore (ls, grep, view; maybe reproduce, run the tests) ─► per outcome:
      solve         a correct fix (gold, or one of the task's alt_fixes) by str_replace ─► check ─► submit
      wrong_fix     part of the fix, or a neighbouring line changed ─► maybe check ─► submit
      loop          one action 10-14 times ─► half: fix, check, submit; half: repeat until a limit
      format_error  a call with invalid JSON arguments ─► (if re-prompted) as solve
      give_up       a final message without a change (text only, or submit)
      wander        explore without end, until a limit
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from enum import StrEnum
from itertools import count
from typing import Any

from factory.agent.replay import Hunk, hunk_call, parse_patch
from factory.agent.toolchain import Toolchain, agent_test_command, toolchain
from factory.records import Task


class Outcome(StrEnum):
    solve = "solve"
    wrong_fix = "wrong_fix"
    loop = "loop"
    format_error = "format_error"
    give_up = "give_up"
    wander = "wander"


Call = tuple[str, dict[str, Any] | str]
"""A tool name and its arguments (a string is sent as is: a malformed call)."""
Step = tuple[str, list[Call]]
"""One turn: the assistant's text and its tool calls."""


# fmt: off
# Plausible wrong edits of a line next to the bug: (pattern, replacement), the first that fits.
_TWEAKS = [
    (" >= ", " > "), (" <= ", " < "), (" > ", " >= "), (" < ", " <= "), (" == ", " != "),
    (" != ", " == "), (" + 1", " - 1"), (" - 1", " + 1"), (" and ", " or "), (" or ", " and "),
    ("is not None", "is None"), ("is None", "is not None"), ("True", "False"), ("False", "True"),
]
# The same for a language with C's operators (Go, JavaScript, Java, Rust): && and ||, true and false.
_C_TWEAKS = [
    *_TWEAKS[:8], (" && ", " || "), (" || ", " && "), ("true", "false"), ("false", "true"),
    (" != nil", " == nil"), (" == nil", " != nil"), (" === ", " !== "), (" !== ", " === "),
]
_KEYWORDS = {
    "self", "return", "None", "True", "False", "elif", "else", "raise", "import", "from",
    "isinstance", "lambda", "with", "while", "pass",
}
_C_KEYWORDS = {
    "func", "function", "const", "this", "public", "private", "protected", "static", "final", "struct",
    "impl", "match", "String", "null", "true", "false", "else", "return", "throw", "type", "void",
}
# fmt: on
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


class Plan:
    """The turns of one outcome, as a generator (loops and wandering never end by themselves)."""

    def __init__(self, task: Task, outcome: Outcome, rng: random.Random, parallel: float, fix: str | None = None):
        """`fix`: the correct fix it knows, the task's gold patch or one of its `alt_fixes`."""
        self.task, self.outcome, self.rng, self.parallel = task, outcome, rng, parallel
        self.chain = toolchain(task.language)
        self.python = task.tests.framework == "pytest"
        workdir = task.workdir.rstrip("/")
        changes = parse_patch(fix or task.gold_patch)
        target = next((c for c in changes if c.status == "modified"), None)
        self.path = f"{workdir}/{target.path}" if target else workdir
        self.hunks: list[Hunk] = [h.trimmed() for h in target.hunks] if target else []
        self.fix: list[Call] = []
        for change in changes:
            path = f"{workdir}/{change.path}"
            if change.status == "deleted":
                self.fix.append(("bash", {"command": f"rm {path}"}))
            elif change.status == "created":
                text = "".join(h.new for h in change.hunks)
                self.fix.append(
                    ("str_replace_editor", {"command": "create", "path": path, "file_text": text})
                )
            else:
                self.fix += [
                    ("str_replace_editor", hunk_call(h.trimmed(), path)) for h in change.hunks
                ]
        self.symbol = _symbol(self.hunks[0], self.chain) if self.hunks else "TODO"
        ticks = re.findall(r"`([A-Za-z_][A-Za-z0-9_.]*)`", task.problem_statement)
        self.words = list(
            dict.fromkeys([self.symbol, *ticks, *_IDENT.findall(task.problem_statement)[:20]])
        )
        code = re.search(r"```python\n(.*?)```", task.problem_statement, re.S)
        self.repro = code.group(1) if code and self.python else None  # run with python, as a pytest task's repo is
        self.tests = (
            task.FAIL_TO_PASS[0].split("::")[0].rsplit("/", 1)[0] if task.FAIL_TO_PASS else "."
        )

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def steps(self) -> Iterator[Step]:
        yield from self.explore()
        if self.outcome is Outcome.wander:
            yield from self.wander()
        if self.outcome is Outcome.give_up:
            text = self.rng.choice(
                [
                    "I could not pin down the cause of this issue with confidence, so I am stopping without a change.",
                    "I was not able to find a fix I trust; I'll leave the code unchanged.",
                ]
            )
            yield (text, [("submit", {})] if self.chance(0.5) else [])
            return
        if self.outcome is Outcome.loop:
            yield from self.repeat(self.rng.randint(10, 14))
            if self.chance(0.5):
                yield from self.repeat(None)
        edits = self.wrong() if self.outcome is Outcome.wrong_fix else self.fix
        if self.outcome is Outcome.format_error:
            name, args = edits[0] if edits else ("bash", {"command": "ls"})
            good = json.dumps(args)
            yield (
                "Now I'll apply the fix.",
                [(name, good[: self.rng.randint(len(good) // 2, len(good) - 1)])],
            )
        yield from self.edit(edits)
        if self.outcome is not Outcome.wrong_fix or self.chance(0.5):
            yield from self.check()
        yield (
            self.rng.choice(
                ["The fix is in place; submitting.", "Done: the change addresses the issue."]
            ),
            [("submit", {})],
        )

    def explore(self) -> Iterator[Step]:
        ext = self.chain.extensions or ("*",)
        ls = self.rng.choice(["ls", "ls -la", f"find . -name '*.{ext[0]}' -not -path './.git/*' | sort"])
        include = " ".join(f"--include='*.{e}'" for e in ext)
        grep = ("bash", {"command": f"grep -rn \"{self.symbol}\" {include} ."})
        if self.chance(self.parallel):
            yield (
                "Let me look around the repository and find the code in question.",
                [("bash", {"command": ls}), grep],
            )
        else:
            yield ("I'll start by exploring the repository structure.", [("bash", {"command": ls})])
            yield (f"Let me find where `{self.symbol}` is defined and used.", [grep])
        if self.hunks:
            yield ("Let me read the relevant code.", [self.view(self.hunks[0], 0)])
        if self.repro and self.chance(0.5):
            yield (
                "Let me reproduce the issue first.",
                [("bash", {"command": f"python - <<'EOF'\n{self.repro}EOF"})],
            )
        if self.chance(0.5):
            yield ("Let me run the existing tests to see where they stand.", [self.run_tests()])

    def view(self, hunk: Hunk, shift: int) -> Call:
        start = max(1, hunk.old_start - self.rng.randint(5, 15) + shift)
        end = start + self.rng.randint(20, 40)
        return (
            "str_replace_editor",
            {"command": "view", "path": self.path, "view_range": [start, end]},
        )

    def run_tests(self) -> Call:
        """The task's tests: pytest on the fix's test folder, else the task's own command."""
        if self.python:
            command = f"python -m pytest -q {self.tests} 2>&1 | tail -n 15"
        else:
            command = f"{agent_test_command(self.task)} 2>&1 | tail -n 30"
        return ("bash", {"command": command, "timeout": 120})

    def edit(self, calls: list[Call]) -> Iterator[Step]:
        if len(calls) > 1 and self.chance(self.parallel):
            yield ("I see the problem. Let me fix it.", calls)
            return
        for call in calls:
            yield ("I see the problem. Let me fix it.", [call])

    def check(self) -> Iterator[Step]:
        calls: list[Call] = []
        if self.repro:
            calls.append(("bash", {"command": f"python - <<'EOF'\n{self.repro}EOF"}))
        calls.append(self.run_tests())
        if self.chance(self.parallel):
            yield ("Let me check the fix.", calls)
        else:
            for call in calls:
                yield ("Let me verify the change.", [call])

    def repeat(self, times: int | None) -> Iterator[Step]:
        grep = self.chance(0.5) or not self.hunks
        for i in range(times) if times is not None else count():
            if grep:
                yield (
                    "Let me search for it once more.",
                    [("bash", {"command": f'grep -rn "{self.symbol}" .'})],
                )
            else:
                yield (
                    "Let me look at this part of the file again.",
                    [self.view(self.hunks[0], 5 * (i % 4))],
                )

    def wander(self) -> Iterator[Step]:
        for i in count():
            if i % 2 == 0:
                word = self.words[(i // 2) % len(self.words)]
                flag = ["-rn", "-rni", "-rnw", "-rl"][(i // 2 // len(self.words)) % 4]
                yield (
                    f"Let me search for `{word}`.",
                    [("bash", {"command": f'grep {flag} "{word}" .'})],
                )
            else:
                start = 1 + 30 * (i // 2 % 10)
                view = {"command": "view", "path": self.path, "view_range": [start, start + 30]}
                yield ("Let me read more of this file.", [("str_replace_editor", view)])

    def wrong(self) -> list[Call]:
        """A plausible wrong fix: part of the gold fix, else a neighbouring line changed, else a no-op comment."""
        if not self.hunks:
            return []
        if len(self.hunks) > 1:
            return [("str_replace_editor", hunk_call(h, self.path)) for h in self.hunks[:-1]]
        hunk = self.hunks[0]
        lines = hunk.lines
        blocks = [
            i
            for i, (tag, _) in enumerate(lines)
            if tag != " " and (i == 0 or lines[i - 1][0] == " ")
        ]
        keep = (
            blocks[1] if len(blocks) > 1 else 0
        )  # changes before this index stay, later ones are undone
        undone = [
            (" ", text) if tag == "-" and i >= keep else (tag, text)
            for i, (tag, text) in enumerate(lines)
            if not (tag == "+" and i >= keep)
        ]
        if len(blocks) < 2:
            undone = _tweak(undone, avoid={text for tag, text in lines if tag != " "}, comment=self.chain.comment,
                            tweaks=_C_TWEAKS if self.chain.comment == "//" else _TWEAKS)
        return [
            (
                "str_replace_editor",
                hunk_call(Hunk(hunk.old_start, hunk.old_count, hunk.header, undone), self.path),
            )
        ]


def _tweak(lines: list[tuple[str, str]], avoid: set[str], comment: str = "#",
           tweaks: list[tuple[str, str]] = _TWEAKS) -> list[tuple[str, str]]:
    """Change the code line nearest the bug that the real fix leaves alone (changing the buggy
    line itself could fix it); with none to change, add a comment above the bug (a no-op)."""
    bug = next((i for i, (_, text) in enumerate(lines) if text in avoid), 0)
    skip = (comment, '"', "'", 'r"', *(("/*", "*") if comment == "//" else ()))  # comments and strings
    for i in sorted(range(len(lines)), key=lambda i: abs(i - bug)):
        text = lines[i][1]
        if text in avoid or not text.strip() or text.lstrip().startswith(skip):
            continue
        for pattern, replacement in tweaks:
            if pattern in text:
                return [
                    *lines[:i],
                    ("-", text),
                    ("+", text.replace(pattern, replacement, 1)),
                    *lines[i + 1 :],
                ]
    indent = re.match(r"\s*", lines[bug][1] if lines else "").group(0)
    return [
        *lines[:bug],
        ("+", f"{indent}{comment} Handle the edge case from the issue report.\n"),
        *lines[bug:],
    ]


def _symbol(hunk: Hunk, chain: Toolchain) -> str:
    """The name an agent would grep for: the definition around the change, else a name in it."""
    before = []
    for tag, text in hunk.lines:
        if tag != " ":
            break
        before.append(text)
    for text in [*reversed(before), hunk.header]:
        if name := chain.defined_name(text):
            return name
    keywords = _KEYWORDS if chain.comment == "#" else _KEYWORDS | _C_KEYWORDS
    names = [n for n in _IDENT.findall(hunk.side("-+")) if n not in keywords]
    return max(names, key=len) if names else "def "
