"""The seam of the per-language diff rules: what a language's test files and test configuration are.

The policy (`policy.py`) owns what holds in every language (paths outside the repo, .git,
symlinks, start-up hooks, build artifacts, binary files, the task's own test command); a
language's `Rules` say, of each path git lists in the patch:

    refusal   the whole patch is refused: the path changes how the tests run or shadows what
              they import, and leaving it out would still leave the rest written for it
    dropped   left out with a flag (its start state stays): test changes, test configuration
    kept      of a kept path: a refusal (Python's shadowing), a flag for the reviewer, or nothing
    read_after / judge
              a kept manifest (pyproject.toml, go.mod, package.json, Cargo.toml, pom.xml, a
              lockfile, a .go file) is read before and after the apply; `judge` keeps it, puts
              back its test configuration (the rest of the agent's file kept where that can be
              done exactly), or refuses the patch

A language is one module with a `Rules` subclass and one `LANGUAGES.add` (`__init__.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from factory.records import FlagKind, VerdictFlag
from factory.verify.facts import RepoFacts


@dataclass(frozen=True)
class PutBack:
    """A judged file the tests must see otherwise than the agent left it."""

    content: bytes | None
    """What the tests see: the start state's file, or the agent's with the judged parts put back
    (None: the file is removed, it did not exist at the start state)."""
    why: str
    """What was put back, for the flag."""


@dataclass(frozen=True)
class Refusal:
    why: str


Judgement = PutBack | Refusal | None
"""`Rules.judge`'s answer: None keeps the agent's file as it is."""
Kept = Refusal | VerdictFlag | None


class Rules:
    """No rule of its own: the default of every method."""

    language = ""

    def refusal(self, path: str, facts: RepoFacts) -> str | None:
        """Why a change at `path` (either name of a rename) refuses the whole patch, or None."""
        return None

    def dropped(self, path: str, facts: RepoFacts) -> FlagKind | None:
        """`dropped_test_configuration` or `dropped_test_change` for a path left out, else None."""
        return None

    def kept(self, path: str, facts: RepoFacts) -> Kept:
        """Of a section that is applied: a refusal, a flag for the reviewer, or None."""
        return None

    def read_after(self, path: str) -> bool:
        """Whether a kept file is read before and after the apply and `judge`d."""
        return False

    def judge(self, path: str, before: bytes | None, after: bytes | None, facts: RepoFacts) -> Judgement:
        """The file `path` at the start state and as the kept part of the patch leaves it
        (None: absent); what the tests see of it."""
        return None


def parts_of(path: str) -> list[str]:
    return path.split("/")


def under(path: str, folders: set[str] | frozenset[str]) -> bool:
    """Whether some folder of `path` (not its own name) is one of `folders`."""
    return any(part in folders for part in path.split("/")[:-1])


class TestFolders(Rules):
    """A language without rules of its own: its test folders are test changes, as in most languages."""

    __test__ = False  # not a pytest test class
    FOLDERS = frozenset({"test", "tests", "__tests__", "testdata", "spec"})

    def dropped(self, path: str, facts: RepoFacts) -> FlagKind | None:
        return FlagKind.dropped_test_change if under(path, self.FOLDERS) else None
