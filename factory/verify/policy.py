"""The diff policy: what an agent's patch may change, judged on what git reads in it.

Git reads the diff, not this module (`gitread.py` lists it in the verification container,
with `git apply --numstat`), so any prefix, quoting or line terminator git accepts is judged
as git will apply it, and the sections left out are left out by `git apply --exclude`. Here
are the rules, as pure functions of that list and of facts about the start state.

Refused outright (the whole patch; a trajectory that tries these is poisoned):
    symlinks and gitlinks (created, changed or written through), paths outside the repo or
    in .git, interpreter start-up hooks (`*.pth`, sitecustomize / usercustomize as a module
    or a package, anywhere), and a new top-level module or package whose name the image's
    test interpreter can already import. Left out, each of these would still say something
    false about the repo the rest of the patch was written for, or run where no drop reaches.
Dropped and flagged (the rest of the patch is still graded):
    test configuration (conftest.py anywhere, pytest.ini, tox.ini, ...; pytest's sections of
    packaging files are judged after the apply, `packaging.py`), test files and test folders
    (the hidden tests come from the task, under its own configuration, not the agent's), and
    binary files. A file left out is the start state's: nothing of the agent's runs from it.
Left out silently:
    build artifacts (bytecode, egg-info, caches: `BUILD_ARTIFACTS`).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from factory.records import FlagKind, VerdictFlag
from factory.sandbox.git import BUILD_ARTIFACTS

TEST_DIRS_AT_ROOT = {"tests", "test", "testing"}
TEST_DIRS_ANYWHERE = {"tests"}
"""`pkg/tests/` holds tests (sympy, astropy, pandas); `pkg/test/` and `pkg/testing/` are library
code (django.test, numpy.testing) and are graded, with a flag for the reviewer."""
PYTEST_CONFIG = {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", "conftest.py", "noxfile.py"}
PACKAGING_CONFIG = {"pyproject.toml", "setup.cfg", "setup.py"}
STARTUP_HOOKS = {"sitecustomize", "usercustomize"}
FLAGS_PER_KIND = 20
"""Dropped sections named one by one in the flags; past that, one flag counts the rest."""
TEST_MACHINERY = {"pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging", "unittest", "conftest"}
FALLBACK_IMPORTABLE = frozenset(sys.stdlib_module_names) | TEST_MACHINERY
"""Used only when the image's interpreter could not be asked what it imports."""
MODE_HEADERS = (b"old mode ", b"new mode ", b"deleted file mode ", b"new file mode ")
REGULAR_MODE = re.compile(rb"(?:100644|100755)\s*")
INDEX_LINE = re.compile(rb"[0-9a-fA-F]*\.\.[0-9a-fA-F]*(?: (?:100644|100755))?\s*")
UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


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


@dataclass
class Decision:
    kept: list[Change] = field(default_factory=list)
    dropped: list[Change] = field(default_factory=list)
    """Left out with a flag: test configuration, test changes, binary files."""
    ignored: list[Change] = field(default_factory=list)
    """Left out silently: build artifacts."""
    flags: list[VerdictFlag] = field(default_factory=list)
    rejected: str | None = None
    """Why the whole patch was refused, or None."""

    @property
    def excluded(self) -> list[str]:
        """The names whose sections are left out (`gitread.apply_files`)."""
        return sorted({c.path for c in (*self.dropped, *self.ignored)})

    @property
    def packaging_files(self) -> list[str]:
        """Kept packaging files: their content is judged once the kept part is applied."""
        return sorted({p for c in self.kept for p in c.paths if _name(p) in PACKAGING_CONFIG})


def refused(why: str) -> Decision:
    return Decision(rejected=why, flags=[VerdictFlag(kind=FlagKind.refused, detail=why)])


def mode_refusal(patch: str) -> str | None:
    """The one judgement made on the diff text: every file mode in it is a regular file's.

    Git takes modes only from these header lines (split at "\\n" alone, as git splits), so
    a mode line that is not exactly 100644 or 100755 refuses the patch: symlinks, gitlinks
    and modes git would read some other way (octal prefixes, signs) never reach git.
    """
    try:
        lines = patch.encode().split(b"\n")
    except UnicodeEncodeError:
        return "the patch is not UTF-8 text"
    for number, line in enumerate(lines, 1):
        if line.startswith(MODE_HEADERS):
            ok = REGULAR_MODE.fullmatch(line.split(b"mode ", 1)[1])
        elif line.startswith(b"index "):
            ok = INDEX_LINE.fullmatch(line[6:])
        else:
            continue
        if not ok:
            return f"symlink, submodule or unusual file mode on line {number}: {line[:80].decode(errors='replace')}"
    return None


def apply_policy(changes: Iterable[Change], facts: RepoFacts) -> Decision:
    """Judge every section git reads in a patch; refuse it, or say which sections to leave out."""
    changes = list(changes)
    for change in changes:
        for path in change.paths:
            why = _path_refusal(path, facts)
            if why:
                return refused(why)
    decision, named = Decision(), Counter()

    def drop(change: Change, kind: FlagKind) -> None:
        decision.dropped.append(change)
        named[kind] += 1
        if named[kind] <= FLAGS_PER_KIND:
            decision.flags.append(VerdictFlag(kind=kind, detail=change.path))

    for change in changes:
        if any(_is_artifact(p) for p in change.paths):
            decision.ignored.append(change)
        elif any(_name(p) in PYTEST_CONFIG for p in change.paths):
            drop(change, FlagKind.dropped_test_configuration)
        elif any(is_test_path(p) for p in change.paths):
            drop(change, FlagKind.dropped_test_change)
        elif change.binary:
            drop(change, FlagKind.dropped_binary)
        else:
            decision.kept.append(change)
    # a section is left out by its name, with every other section of that name: so does the policy
    excluded = set(decision.excluded)
    for change in [c for c in decision.kept if c.path in excluded]:
        decision.kept.remove(change)
        drop(change, FlagKind.dropped_same_name)
    decision.flags += [VerdictFlag(kind=kind, detail=f"{count - FLAGS_PER_KIND} more")
                       for kind, count in named.items() if count > FLAGS_PER_KIND]
    for change in decision.kept:
        shadowed = _shadowed(change.path, facts)
        if shadowed:
            return refused(f"new module shadows {shadowed!r}: {change.path}")
        if _is_library_test_support(change.path):
            decision.flags.append(VerdictFlag(kind=FlagKind.library_test_support, detail=change.path))
    return decision


def is_test_path(path: str) -> bool:
    *dirs, name = path.split("/")
    return (
        bool(dirs) and dirs[0] in TEST_DIRS_AT_ROOT
        or any(d in TEST_DIRS_ANYWHERE for d in dirs)
        or name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
        or name in ("conftest.py", "tests.py")
    )


def _path_refusal(path: str, facts: RepoFacts) -> str | None:
    parts = path.split("/")
    name = parts[-1]
    if any("\udc80" <= ch <= "\udcff" for ch in path):
        return f"path is not UTF-8: {path!r}"
    if UNPRINTABLE.search(path):
        return f"path with control characters: {path!r}"
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts):  # a backslash is a name's, on POSIX
        return f"path outside the repo: {path}"
    if any(p.lower().rstrip(". ") == ".git" or p.lower() == "git~1" for p in parts):
        return f"change inside .git: {path}"
    if any("/".join(parts[:i]) in facts.links for i in range(1, len(parts) + 1)):
        return f"symlink or submodule at {path}"
    if name.lower().endswith(".pth") or any(p.split(".")[0] in STARTUP_HOOKS for p in parts):
        return f"interpreter start-up hook: {path}"
    return None


def _is_artifact(path: str) -> bool:
    parts = path.split("/")
    return any(_glob(pattern.split("/"), parts) for pattern in BUILD_ARTIFACTS)


def _glob(pattern: list[str], parts: list[str]) -> bool:
    """Git's `:(glob)` matching: `**` is any number of folders, other wildcards stay in one."""
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_glob(rest, parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], head) and _glob(rest, parts[1:])


def _is_library_test_support(path: str) -> bool:
    dirs = path.split("/")[:-1]
    return any(d in TEST_DIRS_AT_ROOT for d in dirs[1:])


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def _shadowed(path: str, facts: RepoFacts) -> str | None:
    """The importable name a new top-level module or package at `path` would hide, if any."""
    if path in facts.files:
        return None
    folder, name = _parent(path), _name(path)
    if name == "__init__.py" and folder:
        folder, module = _parent(folder), _name(folder)
    elif name.endswith(".py"):
        module = name[:-3]
    elif name.endswith((".so", ".pyd")):
        module = name.split(".")[0]  # json.cpython-311-x86_64-linux-gnu.so
    else:
        return None
    return module if folder in facts.module_dirs and module in facts.importable else None


def module_dirs(files: Iterable[str], sys_path: Iterable[str], workdir: str, test_files: Iterable[str]) -> frozenset[str]:
    """Folders of the repo on sys.path when the tests run: the root, src/, the image's own
    entries inside the repo, and the folders pytest puts first for each test file and
    conftest.py (the first folder up that is not a package)."""
    files = set(files)
    root = workdir.rstrip("/")
    dirs = {"", "src"}
    for entry in sys_path:
        entry = entry.rstrip("/")
        if entry == root:
            dirs.add("")
        elif entry.startswith(root + "/"):
            dirs.add(entry[len(root) + 1:])
    for test_file in [*test_files, *(f for f in files if _name(f) == "conftest.py")]:
        folder = _parent(test_file)
        while folder and f"{folder}/__init__.py" in files:
            folder = _parent(folder)
        dirs.add(folder)
    return frozenset(dirs)
