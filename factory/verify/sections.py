"""A patch cut where git cuts it into sections, and the shape of its hunks.

The verifier does not parse a patch to judge it (git lists it, `gitread.py`); it cuts one here
for two things only, each checked against git's own reading or harmless when wrong:

- leaving out the sections the policy drops by writing the patch without them, rather than
  naming every one on a command line (`--exclude` per file passes the kernel's argument limits
  past a few thousand files). The cut patch is applied only when git lists it as exactly the
  kept sections of the original (same names, same line counts, in order); otherwise the
  original is applied with `--exclude`.
- whether the patch has hunks without any context line (`git diff -U0`): strict `git apply`
  anchors such a hunk at the end of its file, so it is applied with `--unidiff-zero` instead,
  at the line it names and nowhere else.
"""

from __future__ import annotations

import re

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _lines(patch: str) -> list[str]:
    """Lines as git splits them: at "\\n" alone, each keeping its terminator."""
    return [line for line in re.split(r"(?<=\n)", patch) if line]


def split(patch: str) -> list[str]:
    """The sections of `patch`, in order, so that joined they are `patch` again; text before
    the first section goes with it. A section starts at a `diff ` line, or at a `---`/`+++` pair
    once the section before has a hunk or a binary patch, never inside a hunk's counted lines."""
    lines = _lines(patch)
    pieces: list[list[str]] = [[]]
    started = body = False
    old = new = 0
    for i, line in enumerate(lines):
        if old > 0 or new > 0:
            if line[:1] in (" ", "-", "+", "\n"):
                old -= line[:1] != "+"
                new -= line[:1] != "-"
                pieces[-1].append(line)
                continue
            old = new = 0  # a hunk cut short: git calls the patch corrupt, and the check below fails
        pair = line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
        if line.startswith("diff ") or (pair and body):
            if started:
                pieces.append([])
            started, body = True, False
        elif pair:
            started = True
        hunk = HUNK.match(line)
        if hunk and started:
            old, new = int(hunk[2] or 1), int(hunk[4] or 1)
            body = True
        elif line.startswith("GIT binary patch"):
            body = True
        pieces[-1].append(line)
    return ["".join(piece) for piece in pieces if piece]


def has_zero_context_hunk(patch: str) -> bool:
    """Whether a hunk that changes lines inside a file has no context line at all."""
    lines = _lines(patch)
    for i, line in enumerate(lines):
        hunk = HUNK.match(line)
        if not hunk:
            continue
        old_start, old, new_start, new = (int(hunk[1]), int(hunk[2] or 1), int(hunk[3]), int(hunk[4] or 1))
        if (old_start, old) == (0, 0) or (new_start, new) == (0, 0):
            continue  # a whole file made or deleted: nothing around it to anchor to
        body, old_left, new_left = [], old, new
        for follow in lines[i + 1:]:
            if not (old_left > 0 or new_left > 0) or follow[:1] not in (" ", "-", "+", "\n"):
                break
            old_left -= follow[:1] != "+"
            new_left -= follow[:1] != "-"
            body.append(follow[:1])
        if body and body[0] not in (" ", "\n") and body[-1] not in (" ", "\n"):
            return True
    return False
