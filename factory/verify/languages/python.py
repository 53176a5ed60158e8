"""Python's rules: pytest's test files and configuration, packaging files, shadowing of importable modules.

Dropped and flagged: test configuration (conftest.py anywhere, pytest.ini, tox.ini, ...),
test files and test folders. Judged after the apply (`packaging.py`): pytest's sections of
pyproject.toml, setup.cfg and setup.py, put back at their start state. Refused: a new top-level
module or package whose name the image's test interpreter can already import. Flagged: a
change of library test support (`pkg/test/`, `pkg/testing/`).
"""

from __future__ import annotations

from collections.abc import Iterable

from factory.records import FlagKind, VerdictFlag
from factory.verify.facts import RepoFacts, name_of, parent_of
from factory.verify.languages.base import Judgement, Kept, PutBack, Refusal, Rules
from factory.verify.packaging import packaging_configuration

TEST_DIRS_AT_ROOT = {"tests", "test", "testing"}
TEST_DIRS_ANYWHERE = {"tests"}
"""`pkg/tests/` holds tests (sympy, astropy, pandas); `pkg/test/` and `pkg/testing/` are library
code (django.test, numpy.testing) and are graded, with a flag for the reviewer."""
PYTEST_CONFIG = {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", "conftest.py", "noxfile.py"}
PACKAGING_CONFIG = {"pyproject.toml", "setup.cfg", "setup.py"}


class PythonRules(Rules):
    language = "python"

    def dropped(self, path: str, facts: RepoFacts) -> FlagKind | None:
        if name_of(path) in PYTEST_CONFIG:
            return FlagKind.dropped_test_configuration
        return FlagKind.dropped_test_change if is_test_path(path) else None

    def kept(self, path: str, facts: RepoFacts) -> Kept:
        shadowed = _shadowed(path, facts)
        if shadowed:
            return Refusal(f"new module shadows {shadowed!r}: {path}")
        if any(d in TEST_DIRS_AT_ROOT for d in path.split("/")[1:-1]):
            return VerdictFlag(kind=FlagKind.library_test_support, detail=path)
        return None

    def read_after(self, path: str) -> bool:
        return name_of(path) in PACKAGING_CONFIG

    def judge(self, path: str, before: bytes | None, after: bytes | None, facts: RepoFacts) -> Judgement:
        configures = packaging_configuration(path, before, after)
        return PutBack(before, configures) if configures else None


def is_test_path(path: str) -> bool:
    *dirs, name = path.split("/")
    return (
        bool(dirs) and dirs[0] in TEST_DIRS_AT_ROOT
        or any(d in TEST_DIRS_ANYWHERE for d in dirs)
        or name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
        or name in ("conftest.py", "tests.py")
    )


def _shadowed(path: str, facts: RepoFacts) -> str | None:
    """The importable name a new top-level module or package at `path` would hide, if any."""
    if path in facts.files:
        return None
    folder, name = parent_of(path), name_of(path)
    if name == "__init__.py" and folder:
        folder, module = parent_of(folder), name_of(folder)
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
    for test_file in [*test_files, *(f for f in files if name_of(f) == "conftest.py")]:
        folder = parent_of(test_file)
        while folder and f"{folder}/__init__.py" in files:
            folder = parent_of(folder)
        dirs.add(folder)
    return frozenset(dirs)
