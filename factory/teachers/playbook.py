"""A scripted agent's turns: what an agent that knows the task's gold fix does, per outcome.

The scripted teacher (factory/teachers/scripted.py) plays these turns back through the real
tools; everything here is a pure function of the task, the outcome and a seeded `Random`.

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
_KEYWORDS = {
    "self", "return", "None", "True", "False", "elif", "else", "raise", "import", "from",
    "isinstance", "lambda", "with", "while", "pass",
}
# fmt: on
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


class Plan:
    """The turns of one outcome, as a generator (loops and wandering never end by themselves)."""

    def __init__(self, task: Task, outcome: Outcome, rng: random.Random, parallel: float, fix: str | None = None):
        """`fix`: the correct fix it knows, the task's gold patch or one of its `alt_fixes`."""
        self.task, self.outcome, self.rng, self.parallel = task, outcome, rng, parallel
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
        self.symbol = _symbol(self.hunks[0]) if self.hunks else "TODO"
        ticks = re.findall(r"`([A-Za-z_][A-Za-z0-9_.]*)`", task.problem_statement)
        self.words = list(
            dict.fromkeys([self.symbol, *ticks, *_IDENT.findall(task.problem_statement)[:20]])
        )
        code = re.search(r"```python\n(.*?)```", task.problem_statement, re.S)
        self.repro = code.group(1) if code else None
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
        ls = self.rng.choice(["ls", "ls -la", "find . -name '*.py' -not -path './.git/*' | sort"])
        grep = ("bash", {"command": f"grep -rn \"{self.symbol}\" --include='*.py' ."})
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
            yield ("Let me run the existing tests to see where they stand.", [self.pytest()])

    def view(self, hunk: Hunk, shift: int) -> Call:
        start = max(1, hunk.old_start - self.rng.randint(5, 15) + shift)
        end = start + self.rng.randint(20, 40)
        return (
            "str_replace_editor",
            {"command": "view", "path": self.path, "view_range": [start, end]},
        )

    def pytest(self) -> Call:
        return (
            "bash",
            {"command": f"python -m pytest -q {self.tests} 2>&1 | tail -n 15", "timeout": 120},
        )

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
        calls.append(self.pytest())
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
            undone = _tweak(undone, avoid={text for tag, text in lines if tag != " "})
        return [
            (
                "str_replace_editor",
                hunk_call(Hunk(hunk.old_start, hunk.old_count, hunk.header, undone), self.path),
            )
        ]


def _tweak(lines: list[tuple[str, str]], avoid: set[str]) -> list[tuple[str, str]]:
    """Change the code line nearest the bug that the real fix leaves alone (changing the buggy
    line itself could fix it); with none to change, add a comment above the bug (a no-op)."""
    bug = next((i for i, (_, text) in enumerate(lines) if text in avoid), 0)
    for i in sorted(range(len(lines)), key=lambda i: abs(i - bug)):
        text = lines[i][1]
        if text in avoid or not text.strip() or text.lstrip().startswith(("#", '"', "'", 'r"')):
            continue
        for pattern, replacement in _TWEAKS:
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
        ("+", f"{indent}# Handle the edge case from the issue report.\n"),
        *lines[bug:],
    ]


def _symbol(hunk: Hunk) -> str:
    """The name an agent would grep for: the function around the change, else a name in it."""
    before = []
    for tag, text in hunk.lines:
        if tag != " ":
            break
        before.append(text)
    for text in [*reversed(before), hunk.header]:
        if match := re.search(r"\b(?:def|class)\s+([A-Za-z_]\w*)", text):
            return match.group(1)
    names = [n for n in _IDENT.findall(hunk.side("-+")) if n not in _KEYWORDS]
    return max(names, key=len) if names else "def "
