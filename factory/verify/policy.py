"""The diff policy: what an agent's patch may change, judged on what git reads in it.

Git reads the diff, not this module (`gitread.py` lists it in the verification container,
with `git apply --numstat`), so any prefix, quoting or line terminator git accepts is judged
as git will apply it, and the sections left out are left out by `git apply --exclude`. Here
are the rules, as pure functions of that list and of facts about the start state; what a test
file or test configuration is differs by language, and is the task's language's
(`factory.verify.languages`).

Refused outright (the whole patch; a trajectory that tries these is poisoned):
    symlinks and gitlinks (created, changed or written through), paths outside the repo or
    in .git, interpreter start-up hooks (`*.pth`, sitecustomize / usercustomize as a module
    or a package, anywhere), and what the language's rules refuse (Python: a new top-level
    module or package whose name the image's test interpreter can already import; JS: a planted
    node_modules; Java: a JUnit service registration). Left out, each of these would still say
    something false about the repo the rest of the patch was written for, or run where no drop
    reaches.
Dropped and flagged (the rest of the patch is still graded):
    the files the task's test command names (its runner script), the language's test
    configuration and test files (the hidden tests come from the task, under its own
    configuration, not the agent's), and binary files. A file left out is the start state's:
    nothing of the agent's runs from it. Manifests are judged after the apply (`Rules.judge`):
    their test configuration is put back at its start state, the rest kept.
Left out silently:
    build artifacts (bytecode, egg-info, caches: `BUILD_ARTIFACTS`).
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase

from factory.records import FlagKind, VerdictFlag
from factory.sandbox.git import BUILD_ARTIFACTS
from factory.verify.facts import FALLBACK_IMPORTABLE, TEST_MACHINERY, Change, RepoFacts
from factory.verify.languages import rules_for
from factory.verify.languages.base import Refusal, Rules
from factory.verify.languages.python import PYTEST_CONFIG, is_test_path, module_dirs

__all__ = ["FALLBACK_IMPORTABLE", "PYTEST_CONFIG", "TEST_MACHINERY", "Change", "Decision", "RepoFacts",
           "apply_policy", "command_files", "is_test_path", "mode_refusal", "module_dirs", "refused"]

STARTUP_HOOKS = {"sitecustomize", "usercustomize"}
FLAGS_PER_KIND = 20
"""Dropped sections named one by one in the flags; past that, one flag counts the rest."""
MODE_HEADERS = (b"old mode ", b"new mode ", b"deleted file mode ", b"new file mode ")
REGULAR_MODE = re.compile(rb"(?:100644|100755)\s*")
INDEX_LINE = re.compile(rb"[0-9a-fA-F]*\.\.[0-9a-fA-F]*(?: (?:100644|100755))?\s*")
UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


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
    rules: Rules = field(default_factory=Rules)
    """The task's language's rules: they judge the kept manifests once the kept part is applied."""
    facts: RepoFacts = field(default_factory=RepoFacts)
    """What the rules were told of the start state, for that judgement."""

    @property
    def excluded(self) -> list[str]:
        """The names whose sections are left out (`gitread.apply_files`)."""
        return sorted({c.path for c in (*self.dropped, *self.ignored)})

    @property
    def judged_after(self) -> list[str]:
        """Kept files the rules read before and after the apply (`Rules.judge`): packaging files, manifests."""
        return sorted({p for c in self.kept for p in c.paths if self.rules.read_after(p)})


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
    """Judge every section git reads in a patch by the rules every language shares and those of
    the task's (`facts.language`); refuse it, or say which sections to leave out."""
    changes = list(changes)
    rules = rules_for(facts.language)
    facts = replace(facts, patched=frozenset(p for c in changes for p in c.paths))
    for change in changes:
        for path in change.paths:
            why = _path_refusal(path, facts) or rules.refusal(path, facts)
            if why:
                return refused(why)
    decision, named = Decision(rules=rules, facts=facts), Counter()

    def drop(change: Change, kind: FlagKind) -> None:
        decision.dropped.append(change)
        named[kind] += 1
        if named[kind] <= FLAGS_PER_KIND:
            decision.flags.append(VerdictFlag(kind=kind, detail=change.path))

    for change in changes:
        kinds = {FlagKind.dropped_test_configuration if p in facts.command_files else rules.dropped(p, facts)
                 for p in change.paths}
        if any(_is_artifact(p) for p in change.paths):
            decision.ignored.append(change)
        elif FlagKind.dropped_test_configuration in kinds:
            drop(change, FlagKind.dropped_test_configuration)
        elif FlagKind.dropped_test_change in kinds:
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
        judged = rules.kept(change.path, facts)
        if isinstance(judged, Refusal):
            return refused(judged.why)
        if judged is not None:
            decision.flags.append(judged)
    return decision


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


def command_files(command: str, files: Iterable[str]) -> frozenset[str]:
    """Tracked files the task's test command names (`sh run-tests.sh`, `./gradlew test`): the
    runner itself, which the tests run under and the agent's patch does not change."""
    try:
        words = shlex.split(command)
    except ValueError:  # an unbalanced quote: the command's words as they stand
        words = command.split()
    files = set(files)
    return frozenset(w.removeprefix("./") for w in words if w.removeprefix("./") in files)
