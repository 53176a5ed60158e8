"""What the diff policy reads: the sections git lists in a patch, and facts about the start state.

Apart from `policy.py` so that the per-language rules (`factory.verify.languages`) and the policy
that calls them both import these records, and neither imports the other's module.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

TEST_MACHINERY = {"pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging", "unittest", "conftest"}
FALLBACK_IMPORTABLE = frozenset(sys.stdlib_module_names) | TEST_MACHINERY
"""Used only when the image's interpreter could not be asked what it imports."""


@dataclass(frozen=True)
class Change:
    """One section of a patch as git reads it."""

    path: str
    """The name git matches `--exclude` against: the new path, or the old one of a deletion."""
    source: str | None = None
    """The other path of a rename or a copy."""
    binary: bool = False

    @property
    def paths(self) -> list[str]:
        return [self.path] if self.source in (None, self.path) else [self.path, self.source]


@dataclass(frozen=True)
class RepoFacts:
    """What the policy knows about the start state the patch is applied to."""

    files: frozenset[str] = frozenset()
    """Tracked paths."""
    links: frozenset[str] = frozenset()
    """Symlinks (tracked or not) and gitlinks."""
    importable: frozenset[str] = FALLBACK_IMPORTABLE
    """Top-level names the image's test interpreter imports."""
    module_dirs: frozenset[str] = frozenset({"", "src"})
    """Folders (relative, "" is the root) on sys.path when the tests run."""
    language: str = "python"
    """The task's language: whose rules judge its test files and test configuration (`languages`)."""
    command: str = ""
    """The task's test command (`TestSpec.command`; empty for pytest): the scripts it names are the runner's."""
    command_files: frozenset[str] = frozenset()
    """Files of the repo the task's test command names (`sh run-tests.sh`): the runner itself."""
    patched: frozenset[str] = frozenset()
    """Every path the patch names (set by `apply_policy`): a rule may ask what else it adds."""


def name_of(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def parent_of(path: str) -> str:
    return path.rpartition("/")[0]
