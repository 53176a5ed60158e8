"""A unified diff as editor calls: the `str_replace_editor` arguments that make the same change.

The scripted teacher edits through the editor like a model would, so it needs the gold fix
as edits rather than as a diff; tests script API teachers the same way.

    for args in editor_calls(task.gold_patch, task.workdir):
        ToolCall(name="str_replace_editor", arguments=json.dumps(args))

Each hunk becomes one `str_replace` of its old side (context and removed lines) by its new
side; trailing blank context lines are dropped from both. A created file becomes `create`.
A deleted file cannot be deleted through the editor, so `editor_calls` refuses those.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")


@dataclass
class Hunk:
    old_start: int
    old_count: int
    header: str
    """Text after the second `@@` (git puts the enclosing function or class there)."""
    lines: list[tuple[str, str]] = field(default_factory=list)
    """(tag, text with its newline): tag is ' ' context, '-' removed, '+' added."""

    def side(self, tags: str) -> str:
        return "".join(text for tag, text in self.lines if tag in tags)

    @property
    def old(self) -> str:
        return self.side(" -")

    @property
    def new(self) -> str:
        return self.side(" +")

    def trimmed(self) -> Hunk:
        """The same change without trailing blank context lines (they add nothing unique)."""
        lines = list(self.lines)
        while lines and lines[-1][0] == " " and not lines[-1][1].strip():
            lines.pop()
        return Hunk(self.old_start, self.old_count, self.header, lines)


@dataclass
class FileChange:
    path: str
    """Path inside the repository, without the `a/` / `b/` prefix."""
    status: str = "modified"
    """`modified`, `created` or `deleted`."""
    hunks: list[Hunk] = field(default_factory=list)


def parse_patch(patch: str) -> list[FileChange]:
    """The files of a unified (git) diff and their hunks; binary changes are skipped."""
    files: list[FileChange] = []
    current: FileChange | None = None
    hunk: Hunk | None = None
    old_path = ""
    for line in patch.splitlines(keepends=True):
        bare = line.rstrip("\n")
        if bare.startswith("diff --git "):
            current, hunk = None, None
        elif bare.startswith("--- "):
            old_path, hunk = bare[4:].split("\t")[0], None
        elif bare.startswith("+++ "):
            new_path = bare[4:].split("\t")[0]
            status = (
                "created"
                if old_path == "/dev/null"
                else "deleted"
                if new_path == "/dev/null"
                else "modified"
            )
            path = old_path if status == "deleted" else new_path
            current = FileChange(_strip_prefix(path), status)
            files.append(current)
        elif (match := _HUNK.match(bare)) and current is not None:
            count = int(match.group(2)) if match.group(2) is not None else 1
            hunk = Hunk(int(match.group(1)), count, match.group(5))
            current.hunks.append(hunk)
        elif hunk is not None and bare.startswith("\\"):
            if hunk.lines:  # "\ No newline at end of file" belongs to the line before it
                tag, text = hunk.lines[-1]
                hunk.lines[-1] = (tag, text.rstrip("\n"))
        elif hunk is not None and line[:1] in (" ", "-", "+"):
            hunk.lines.append((line[0], line[1:]))
        elif hunk is not None and bare == "":
            hunk.lines.append((" ", "\n"))  # some tools strip the space of empty context lines
    return files


def _strip_prefix(path: str) -> str:
    return path[2:] if path[:2] in ("a/", "b/") else path


def editor_calls(patch: str, workdir: str) -> list[dict[str, Any]]:
    """`str_replace_editor` arguments that turn the start state into the patched state."""
    calls: list[dict[str, Any]] = []
    for change in parse_patch(patch):
        path = f"{workdir.rstrip('/')}/{change.path}"
        if change.status == "deleted":
            raise ValueError(f"{change.path}: the editor cannot delete files")
        if change.status == "created":
            text = "".join(h.new for h in change.hunks)
            calls.append({"command": "create", "path": path, "file_text": text})
            continue
        for hunk in change.hunks:
            calls.append(hunk_call(hunk.trimmed(), path))
    return calls


def hunk_call(hunk: Hunk, path: str) -> dict[str, Any]:
    """One hunk as one editor call: `str_replace`, or `insert` when it has no old side."""
    if not hunk.old:
        return {
            "command": "insert",
            "path": path,
            "insert_line": max(hunk.old_start, 0),
            "new_str": hunk.new,
        }
    return {"command": "str_replace", "path": path, "old_str": hunk.old, "new_str": hunk.new}
