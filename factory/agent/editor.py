"""`str_replace_editor`: view, create, str_replace, insert and undo_edit over a sandbox's files.

Everything goes through the sandbox (`read_file`, `write_file`, `exec`), so the editor works
the same on any `Sandbox`. Each file's earlier contents are kept per attempt for
`undo_edit`; undoing a `create` removes the file again. Mistakes a model can fix (a missing
file, an `old_str` that is not unique, a bad line number) come back as the tool's output,
starting with `Error:`.
"""

from __future__ import annotations

import posixpath
import shlex
from typing import Any

from factory.protocols import Sandbox

SNIPPET_CONTEXT = 4
"""Lines shown around an edit."""


class EditError(Exception):
    """A mistake reported back to the model as the tool's output."""


class Editor:
    def __init__(self, sandbox: Sandbox):
        self.sandbox = sandbox
        self.history: dict[str, list[str | None]] = {}
        """Per file, its contents before each edit; None where the edit created the file."""

    def resolve(self, path: str) -> str:
        joined = path if path.startswith("/") else posixpath.join(self.sandbox.workdir, path)
        return posixpath.normpath(joined)

    async def run(self, args: dict[str, Any]) -> str:
        """The tool's output for one call (arguments already checked against the schema)."""
        path = self.resolve(args["path"])
        command = args["command"]
        try:
            if command == "view":
                return await self.view(path, args.get("view_range"))
            if command == "create":
                return await self.create(path, args["file_text"])
            if command == "str_replace":
                return await self.str_replace(path, args["old_str"], args.get("new_str", ""))
            if command == "insert":
                return await self.insert(path, args["insert_line"], args["new_str"])
            return await self.undo(path)
        except EditError as exc:
            return f"Error: {exc}"
        except FileNotFoundError:
            return f"Error: {path} does not exist."
        except IsADirectoryError:
            return f"Error: {path} is a directory; only `view` works on directories."

    async def _read(self, path: str) -> str:
        data = await self.sandbox.read_file(path)
        try:
            return data.decode()
        except UnicodeDecodeError:
            raise EditError(
                f"{path} is not a UTF-8 text file; inspect it with bash instead."
            ) from None

    async def _write(self, path: str, before: str | None, text: str) -> None:
        await self.sandbox.write_file(path, text)
        self.history.setdefault(path, []).append(before)

    # ------------------------------------------------------------------ commands

    async def view(self, path: str, view_range: list[int] | None) -> str:
        try:
            text = await self._read(path)
        except IsADirectoryError:
            return await self._list(path)
        lines = text.splitlines()
        start, end = 1, len(lines)
        if view_range is not None:
            start, end = view_range
            if not 1 <= start <= max(len(lines), 1):
                raise EditError(
                    f"view_range start {start} is outside the file's lines 1-{len(lines)}."
                )
            if end == -1 or end > len(lines):
                end = len(lines)
            elif end < start:
                raise EditError(f"view_range end {end} is before its start {start}.")
        if not lines:
            return f"{path} is empty."
        return f"Here's the result of running `cat -n` on {path}:\n{_numbered(lines, start, end)}"

    async def _list(self, path: str) -> str:
        quoted = shlex.quote(path)
        result = await self.sandbox.exec(
            f"find {quoted} -maxdepth 2 -not -path '*/.*' | sort", timeout=60
        )
        if result.exit_code != 0:
            raise EditError(f"cannot list {path}: {result.output.strip()}")
        return f"Files and directories up to 2 levels deep in {path}, hidden items excluded:\n{result.output.rstrip()}"

    async def create(self, path: str, text: str) -> str:
        try:
            await self._read(path)
        except FileNotFoundError:
            await self._write(path, None, text)
            return f"File created successfully at: {path}"
        raise EditError(
            f"{path} already exists; `create` does not overwrite files (use str_replace)."
        )

    async def str_replace(self, path: str, old: str, new: str) -> str:
        if not old:
            raise EditError("old_str is empty; give the exact text to replace.")
        text = await self._read(path)
        count = text.count(old)
        if count == 0:
            raise EditError(f"old_str did not appear verbatim in {path}; nothing was replaced.")
        if count > 1:
            lines = _lines_of(text, old)
            raise EditError(
                f"old_str occurs {count} times in {path} (lines {', '.join(map(str, lines))}); "
                "nothing was replaced. Include more context to make it unique."
            )
        at = text.index(old)
        updated = text[:at] + new + text[at + len(old) :]
        await self._write(path, text, updated)
        first = text.count("\n", 0, at) + 1
        return self._edited(path, updated, first, first + new.count("\n"))

    async def insert(self, path: str, line: int, new: str) -> str:
        text = await self._read(path)
        lines = text.splitlines(keepends=True)
        if not 0 <= line <= len(lines):
            raise EditError(
                f"insert_line {line} is outside 0-{len(lines)} (the file has {len(lines)} lines)."
            )
        if lines and not lines[-1].endswith("\n") and line == len(lines):
            lines[-1] += "\n"
        block = new if new.endswith("\n") else new + "\n"
        updated = "".join(lines[:line]) + block + "".join(lines[line:])
        await self._write(path, text, updated)
        return self._edited(path, updated, line + 1, line + block.count("\n"))

    async def undo(self, path: str) -> str:
        history = self.history.get(path)
        if not history:
            raise EditError(f"there is no edit of {path} to undo.")
        before = history.pop()
        if before is None:
            result = await self.sandbox.exec(f"rm -f -- {shlex.quote(path)}", timeout=60)
            if result.exit_code != 0:
                raise EditError(f"cannot remove {path}: {result.output.strip()}")
            return f"Undid the creation of {path}: the file is removed."
        await self.sandbox.write_file(path, before)
        return f"Last edit to {path} undone successfully."

    def _edited(self, path: str, text: str, first: int, last: int) -> str:
        lines = text.splitlines()
        start = max(1, first - SNIPPET_CONTEXT)
        end = min(len(lines), last + SNIPPET_CONTEXT)
        return (
            f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet of it:\n"
            f"{_numbered(lines, start, end)}\n"
            "Review the changes and make sure they are as expected. Edit the file again if necessary."
        )


def _numbered(lines: list[str], start: int, end: int) -> str:
    return "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(start, end + 1))


def _lines_of(text: str, needle: str) -> list[int]:
    found, at = [], text.find(needle)
    while at != -1:
        found.append(text.count("\n", 0, at) + 1)
        at = text.find(needle, at + 1)
    return found
