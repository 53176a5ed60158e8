"""Unified diffs as data: which files a patch touches, and the reverse of a patch.

SWE-smith stores the diff that introduces a bug; the reference fix is its reverse.
"""

from __future__ import annotations

import re

_HUNK = re.compile(r"^@@ -(\d+(?:,\d+)?) \+(\d+(?:,\d+)?) @@(.*)$")
_SWAP_HEADERS = {
    "new file mode ": "deleted file mode ",
    "deleted file mode ": "new file mode ",
    "old mode ": "new mode ",
    "new mode ": "old mode ",
}


def reverse_patch(patch: str) -> str:
    """The diff that undoes `patch` (text diffs, including created and deleted files)."""
    if not patch:
        return ""
    out: list[str] = []
    lines = patch.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old, new = line[4:], lines[i + 1][4:]
            out += ["--- " + _flip_prefix(new), "+++ " + _flip_prefix(old)]
            i += 2
            continue
        hunk = _HUNK.match(line.rstrip("\n"))
        if hunk:
            out.append(f"@@ -{hunk.group(2)} +{hunk.group(1)} @@{hunk.group(3)}\n")
            i += 1
            # within a hunk: swap +/-; a run of - then + becomes + then - in the reverse
            body: list[str] = []
            while i < len(lines) and lines[i][:1] in (" ", "-", "+", "\\"):
                body.append(lines[i])
                i += 1
            out += _reverse_hunk_body(body)
            continue
        if line.startswith("diff --git "):
            a, b = line[len("diff --git "):].rstrip("\n").split(" ", 1)
            out.append(f"diff --git {_flip_prefix(b, keep_nl=False)} {_flip_prefix(a, keep_nl=False)}\n")
        elif line.startswith("index "):
            left, _, mode = line[len("index "):].rstrip("\n").partition(" ")
            old, new = left.split("..")
            out.append(f"index {new}..{old}{' ' + mode if mode else ''}\n")
        else:
            for prefix, swapped in _SWAP_HEADERS.items():
                if line.startswith(prefix):
                    out.append(swapped + line[len(prefix):])
                    break
            else:
                out.append(line)
        i += 1
    return "".join(out)


def _flip_prefix(path: str, keep_nl: bool = True) -> str:
    """`a/x` <-> `b/x`; /dev/null stays."""
    text = path.rstrip("\n")
    if text.startswith("a/"):
        text = "b/" + text[2:]
    elif text.startswith("b/"):
        text = "a/" + text[2:]
    return text + ("\n" if keep_nl and path.endswith("\n") else "")


def _reverse_hunk_body(body: list[str]) -> list[str]:
    out: list[str] = []
    minus: list[str] = []
    plus: list[str] = []

    def flush() -> None:
        out.extend(minus)
        out.extend(plus)
        minus.clear()
        plus.clear()

    last: list[str] | None = None
    for line in body:
        tag = line[:1]
        if tag == "-":
            last = plus
            plus.append("+" + line[1:])
        elif tag == "+":
            last = minus
            minus.append("-" + line[1:])
        elif tag == "\\" and last is not None:
            last.append(line)  # "\ No newline at end of file" follows the line it belongs to
        else:
            flush()
            last = None
            out.append(line)
    flush()
    return out


def touched_files(patch: str) -> list[str]:
    """Paths a patch changes (the new path for renames), from its `diff --git` headers."""
    paths: list[str] = []
    for line in patch.splitlines():
        if line.startswith("+++ ") or line.startswith("--- "):
            path = line[4:].split("\t")[0].strip()
            if path != "/dev/null":
                path = path[2:] if path[:2] in ("a/", "b/") else path
                if path not in paths:
                    paths.append(path)
    return paths
