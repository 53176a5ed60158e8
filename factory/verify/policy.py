"""The diff policy: what an agent's patch may change before anything of it runs.

Refused outright (the whole patch; a trajectory that tries these is poisoned):
    binary patches, symlinks, mode changes to executables outside the repo's sources,
    paths outside the repo or inside .git, conftest.py anywhere, pytest and packaging
    configuration, *.pth, sitecustomize.py / usercustomize.py, new top-level modules that
    shadow the standard library or the test machinery.
Dropped and flagged (the rest of the patch is still graded):
    test files and folders: the hidden tests are restored from the task, not the agent.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import PurePosixPath

TEST_DIRS = {"test", "tests", "testing"}
PYTEST_CONFIG = {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", "conftest.py", "noxfile.py"}
PACKAGING_CONFIG = {"pyproject.toml", "setup.cfg", "setup.py"}
STARTUP_HOOKS = {"sitecustomize.py", "usercustomize.py"}
TEST_MACHINERY = {"pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging", "unittest", "conftest"}
SHADOWABLE = set(sys.stdlib_module_names) | TEST_MACHINERY
# configuration text that changes how tests are found or run, in packaging files
TEST_CONFIG_WORDS = re.compile(r"pytest|addopts|testpaths|python_files|python_classes|python_functions|pytest11|plugins", re.I)


@dataclass
class FileDiff:
    old: str | None
    new: str | None
    text: str

    @property
    def path(self) -> str:
        return self.new or self.old or ""


@dataclass
class PolicyResult:
    patch: str = ""
    """The patch that will be applied: the agent's, without dropped test-file sections."""
    rejected: str | None = None
    """Why the whole patch was refused, or None."""
    dropped: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)


def split_patch(patch: str) -> list[FileDiff]:
    """Split a git diff into per-file sections (paths as in the ---/+++ or diff --git lines)."""
    sections = re.split(r"(?m)^(?=diff --git )", patch)
    files: list[FileDiff] = []
    for text in sections:
        if not text.startswith("diff --git "):
            if text.strip():
                files.append(FileDiff(None, None, text))  # not a git diff section: judged as unknown
            continue
        old = new = None
        header = re.match(r"diff --git (\S+) (\S+)", text)
        if header:
            old, new = _strip(header.group(1)), _strip(header.group(2))
        for line in text.splitlines():
            if line.startswith("--- "):
                old = _strip(line[4:].split("\t")[0])
            elif line.startswith("+++ "):
                new = _strip(line[4:].split("\t")[0])
            elif line.startswith(("rename from ", "copy from ")):
                old = line.split(" from ", 1)[1]
            elif line.startswith(("rename to ", "copy to ")):
                new = line.split(" to ", 1)[1]
            elif line.startswith("@@"):
                break
        files.append(FileDiff(old, new, text))
    return files


def _strip(path: str) -> str | None:
    path = path.strip().strip('"')
    if path == "/dev/null":
        return None
    return path[2:] if path[:2] in ("a/", "b/") else path


def is_test_path(path: str) -> bool:
    p = PurePosixPath(path)
    name = p.name
    return (
        any(part in TEST_DIRS for part in p.parts[:-1])
        or name.startswith("test_") and name.endswith(".py")
        or name.endswith("_test.py")
        or name == "tests.py"
    )


def _refusal(f: FileDiff) -> str | None:
    if f.new is None and f.old is None:
        return "not a git diff section"
    if "GIT binary patch" in f.text or re.search(r"(?m)^Binary files .* differ$", f.text):
        return f"binary change to {f.path}"
    if re.search(r"(?m)^(new file mode|new mode|old mode|deleted file mode|index \S+) 120000", f.text):
        return f"symlink at {f.path}"
    for path in filter(None, (f.old, f.new)):
        p = PurePosixPath(path)
        if p.is_absolute() or ".." in p.parts or "\\" in path:
            return f"path outside the repo: {path}"
        if p.parts and p.parts[0] == ".git":
            return f"change inside .git: {path}"
        if p.name in PYTEST_CONFIG:
            return f"test configuration: {path}"
        if p.name in STARTUP_HOOKS or p.suffix == ".pth":
            return f"interpreter start-up hook: {path}"
        if p.name in PACKAGING_CONFIG and TEST_CONFIG_WORDS.search(_changed_text(f.text)):
            return f"test configuration in packaging file: {path}"
    if f.new and f.old is None and _shadows(f.new):
        return f"new module shadows {_module_of(f.new)!r}: {f.new}"
    return None


def _changed_text(text: str) -> str:
    """Added and removed lines, and the hunk headers (they name the section being changed)."""
    return "\n".join(
        line for line in text.splitlines()
        if line[:1] in "+-@" and not line.startswith(("+++ ", "--- "))
    )


def _module_of(path: str) -> str:
    p = PurePosixPath(path)
    parts = list(p.parts[1:] if p.parts[0] == "src" and len(p.parts) > 1 else p.parts)
    return parts[0].removesuffix(".py") if parts else ""


def _shadows(path: str) -> bool:
    """A new file at the repo's top level (or under src/) named like a stdlib or test-machinery module."""
    p = PurePosixPath(path)
    parts = p.parts[1:] if p.parts[0] == "src" and len(p.parts) > 1 else p.parts
    top_module = len(parts) == 1 and parts[0].endswith(".py")
    top_package = len(parts) >= 2 and parts[-1] == "__init__.py" and len(parts) == 2
    return (top_module or top_package) and _module_of(path) in SHADOWABLE


def apply_policy(patch: str) -> PolicyResult:
    result = PolicyResult()
    kept: list[str] = []
    for f in split_patch(patch):
        why = _refusal(f)
        if why:
            return PolicyResult(rejected=why, flags=[f"refused: {why}"])
        if any(is_test_path(p) for p in filter(None, (f.old, f.new))):
            result.dropped.append(f.path)
            result.flags.append(f"dropped test change: {f.path}")
            continue
        kept.append(f.text)
    result.patch = "".join(kept)
    return result
