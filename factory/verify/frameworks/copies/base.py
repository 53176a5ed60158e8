"""The seam between the `command` framework and a language's controls: copies of hidden tests,
each with one expected value changed, written into the test files beside their originals.

    readback: the test files that define a FAIL_TO_PASS test (`needle`), and their siblings
    plan:     CopyWriter.plan(files, f2p, ids, rng) ─► Copies: the files as they run, which
              reported id is a copy of which, and the ids the originals now run under
    grade:    a copy whose original passed must have failed (`frameworks/command.py`)

Why: every result comes out of the process that runs the code under test, so any result can
be forged there (printed runner lines, a rewritten report, `testing` patched through
`//go:linkname`, a jest reporter). What that code cannot do is forge selectively without telling
a copy from a real hidden test: a copy is named like the tests of its file, placed beside its
original, and differs from it by one expected literal. A correct fix passes the original and
fails the copy; a forger that turns failures into passes passes both. Originals get new names
of the same kind, so a forger cannot spare the names it saw in the repo. The plan stays on
the host; nothing in the container names the copies.

A writer registers under the task's language (`COPY_WRITERS`); `treesitter.py` holds what the
writers share (parsing, literal changes, names drawn from a file's words), and `units.py` makes
the plan from the tests and sites a writer read.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Protocol

from factory.registry import Registry


@dataclass
class Copies:
    """What a writer planted in one verification."""

    files: dict[str, str] = field(default_factory=dict)
    """Repo-relative test file -> its whole new text (only files that changed)."""
    copies: dict[str, str] = field(default_factory=dict)
    """A copy's id, as the task's result reader reports it -> the id of its original, as the
    task names it (FAIL_TO_PASS)."""
    renamed: dict[str, str] = field(default_factory=dict)
    """A task id (FAIL_TO_PASS or PASS_TO_PASS) -> the id it is reported under now that its
    test was renamed. Ids not in it run under their own name."""
    uncopied: list[str] = field(default_factory=list)
    """FAIL_TO_PASS ids the writer found no site to change in (or no definition of): the
    verdict names them under `weak controls`."""


class CopyWriter(Protocol):
    """One language's copies (`COPY_WRITERS`)."""

    globs: tuple[str, ...]
    """Globs of the language's test files, as git matches them (`**/*_test.go`; `:(glob)` is added)."""
    declares: str | None
    """An extended regex (`grep -E`) of the files of `globs` read too, after the tests' own, for the
    declarations a site needs (Rust: a test's expected enum variant and its enum's other variants);
    None: none."""

    def needle(self, test_id: str) -> str | None:
        """A fixed string the file that defines `test_id` contains (`grep -F`), e.g.
        `func TestX(` for `TestX/sub`; None when the id tells nothing to look for."""
        ...

    def plan(self, files: dict[str, str], f2p: list[str], ids: list[str], rng: random.Random) -> Copies:
        """Copies of the FAIL_TO_PASS tests `f2p` defined in `files` (path -> text: the files that
        hold a needle, and the language's test files beside them), with every task id in
        `ids` that a rename moves mapped in `renamed`. Pure: no I/O, never raises on odd
        source (a file it cannot parse is left alone and its tests are `uncopied`)."""
        ...

    def hide(self, files: dict[str, str], f2p: list[str]) -> dict[str, str]:
        """The files among `files` that define a FAIL_TO_PASS test, with those tests taken out
        (and whatever that leaves unused, where the language refuses it): the agent's view of
        the start state. Pure, as `plan`."""
        ...


COPY_WRITERS: Registry[CopyWriter] = Registry("copy language")
"""The writer of copies per task language ("go", "rust", "java", "javascript", "typescript")."""
