"""Actions and patches in a comparable form: what `loops` and `dedup` look at.

An action is one assistant tool call: the tool's name and its arguments, normalized so that
calls that do the same thing compare equal:

- arguments are parsed as JSON and dumped with sorted keys (invalid JSON is kept as text);
- whitespace runs inside every string collapse to one space;
- `str_replace_editor view` drops `view_range`, so paging through one file is one action;
- in shell commands, `sed -n 'A,Bp'` line ranges are blanked for the same reason;
- paths are normalized (`/testbed/./a.py/` is `/testbed/a.py`).
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

from factory.records import Trajectory

_SPACE = re.compile(r"\s+")
_SED_RANGE = re.compile(r"(sed\s+-n\s+['\"]?)\d+\s*,\s*\d+(p)")
EDITOR = "str_replace_editor"


def collapse(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _collapse_values(value: Any) -> Any:
    if isinstance(value, str):
        return collapse(value)
    if isinstance(value, list):
        return [_collapse_values(v) for v in value]
    if isinstance(value, dict):
        return {k: _collapse_values(v) for k, v in value.items()}
    return value


def normalize_arguments(tool: str, arguments: str) -> str:
    try:
        args = json.loads(arguments)
    except (json.JSONDecodeError, TypeError):
        return collapse(str(arguments))
    if not isinstance(args, dict):
        return json.dumps(_collapse_values(args), sort_keys=True, ensure_ascii=False)
    args = _collapse_values(args)
    if tool == EDITOR and args.get("command") == "view":
        args.pop("view_range", None)
    if isinstance(args.get("path"), str) and args["path"]:
        args["path"] = posixpath.normpath(args["path"])
    if isinstance(args.get("command"), str) and tool != EDITOR:
        args["command"] = _SED_RANGE.sub(r"\1#,#\2", args["command"])
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


def actions(trajectory: Trajectory) -> list[str]:
    """The normalized actions of a run, in order: one string per assistant tool call."""
    out = []
    for message in trajectory.messages:
        if message.role != "assistant":
            continue
        for call in message.tool_calls:
            out.append(f"{call.name} {normalize_arguments(call.name, call.arguments)}")
    return out


_HUNK = re.compile(r"^@@ [^@]* @@")


def normalize_patch(patch: str) -> str:
    """A patch with whitespace ignored: no `index` lines, no hunk line numbers, no whitespace
    inside changed or context lines, no blank changed lines, no end-of-file newline markers."""
    lines = []
    for line in patch.splitlines():
        if line.startswith(("index ", "\\")):
            continue
        if _HUNK.match(line):
            lines.append("@@")
            continue
        if line.startswith(("+++", "---", "diff ")):
            lines.append(collapse(line))
            continue
        prefix, body = (line[0], line[1:]) if line[:1] in ("+", "-", " ") else ("", line)
        body = _SPACE.sub("", body)
        if body:
            lines.append(prefix + body)
    return "\n".join(lines)
