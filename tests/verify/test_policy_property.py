"""Random and hostile diffs: the policy and git never disagree about which paths a patch changes.

Each example is a patch of random sections (git and traditional headers, any prefix, quoted
and non-ASCII names, renames, copies, deletions, mode changes, binary patches, sections after
a hunk, CR, U+0085 and U+2028 in header lines) against a small repo. Git applies it twice on
the host, in fresh copies: as it comes (every path that changes must be one git listed) and
as the policy judged it (every path that changes must be one the policy kept, and no link).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from factory.verify.policy import FALLBACK_IMPORTABLE, RepoFacts, apply_policy, mode_refusal
from tests.verify import hostgit

BODY = "a\nb\nc\n"
FILES = {"toy/__init__.py": BODY, "toy/core.py": BODY, "tests/test_core.py": BODY, "README": BODY,
         "café.py": BODY, "a[b]*.py": BODY, "run.sh": BODY}
NEW = ["json.py", "pytest/__init__.py", "src/x.py", "toy/new.py", "tests/test_new.py", "toy/café2.py",
       "sp ace.py", "toy/__pycache__/core.cpython-311.pyc", "toy/testing/util.py", ".git/hooks/pre-commit",
       "../escape.py", "sitecustomize/__init__.py", "x.pth", "new[1]?.py", "toy/link2", "conftest.py"]
EXISTING = [*FILES, "link"]
PATHS = [*EXISTING, *NEW]
PREFIXES = [("a/", "b/")] * 4 + [("c/", "i/"), ("i/", "w/"), ("o/", "w/"), ("", ""), ("x/y/", "x/y/")]
ENDS = ["\n"] * 24 + ["\r\n", "\u0085\n", "\u2028\n", " \u2028@@\n"]
MODES = ["100644"] * 8 + ["100755", "120000", "160000"]
HUNK = "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("template") / "repo"
    for path, text in FILES.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to(BODY)  # a link whose target the text hunks can patch
    run = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*run, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*run, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*run, "commit", "-qm", "start"], cwd=repo, check=True)
    return repo


def quoted(name: str) -> str:
    """A name as git writes it with core.quotePath: C-quoted with octal bytes."""
    out = []
    for byte in name.encode():
        ch = chr(byte)
        out.append({'"': '\\"', "\\": "\\\\", "\t": "\\t", "\n": "\\n"}.get(ch) or (ch if 32 <= byte < 127 else f"\\{byte:03o}"))
    return '"' + "".join(out) + '"'


@st.composite
def sections(draw) -> str:
    """One file's section: mostly what git diff writes, now and then bent the ways git tolerates."""
    kind = draw(st.sampled_from(["modify", "create", "delete", "rename", "copy", "mode", "binary", "traditional"]))
    anything = draw(st.integers(0, 4)) == 0
    old = draw(st.sampled_from(PATHS if anything else EXISTING))
    new = draw(st.sampled_from(PATHS if anything else NEW)) if kind in ("rename", "copy", "create", "binary") else old
    pa, pb = draw(st.sampled_from(PREFIXES))
    quote = draw(st.booleans())

    def name(prefix: str, path: str) -> str:
        full = prefix + path
        return quoted(full) if quote or not full.isascii() or " " in full else full

    def end() -> str:
        return draw(st.sampled_from(ENDS))

    a, b = name(pa, old), name(pb, new)
    header = f"diff --git {a} {b}{end()}" if kind != "traditional" or draw(st.booleans()) else ""
    if kind in ("modify", "traditional"):
        if draw(st.booleans()):
            header += f"index 1111111..2222222 {draw(st.sampled_from(MODES))}{end()}"
        return header + f"--- {a}{end()}+++ {b}{end()}" + HUNK
    if kind == "create":
        header = f"diff --git {name(pa, new)} {b}{end()}" if header else ""
        return header + (f"new file mode {draw(st.sampled_from(MODES))}{end()}--- /dev/null{end()}+++ {b}{end()}"
                         "@@ -0,0 +1 @@\n+x\n")
    if kind == "delete":
        return header + f"deleted file mode 100644{end()}--- {a}{end()}+++ /dev/null{end()}@@ -1,3 +0,0 @@\n-a\n-b\n-c\n"
    if kind in ("rename", "copy"):
        src, dst = (quoted(p) if quote or not p.isascii() else p for p in (old, new))
        body = f"similarity index 100%{end()}{kind} from {src}{end()}{kind} to {dst}{end()}"
        return header + body + (f"--- {a}{end()}+++ {b}{end()}{HUNK}" if draw(st.booleans()) else "")
    if kind == "mode":
        return header + f"old mode 100644{end()}new mode {draw(st.sampled_from(MODES))}{end()}"
    if draw(st.booleans()):
        header = f"diff --git {name(pa, new)} {b}{end()}"
        return header + f"new file mode 100644\nindex {ZERO_ID}..{BINARY_ID}\nGIT binary patch\n{BINARY}"
    return header + f"index 1111111..2222222 100644\nBinary files {a} and {b} differ\n"


# `printf '\0\1\2' | git hash-object --stdin` and its `git diff --binary` literal
ZERO_ID = "0" * 40
BINARY_ID = "8352675d67aed6625ece79af41c27fdb4ee2e867"
BINARY = "literal 3\nKcmZQzWC8#H2LJ>B\n\nliteral 0\nHcmV?d00001\n\n"


@st.composite
def patches(draw) -> str:
    parts = draw(st.lists(sections(), min_size=1, max_size=4))
    junk = st.sampled_from(["", "", "", "junk\n", "\u2028\n", "@@ fake\n", "\n"])
    return "".join(draw(junk) + part for part in parts)


def snapshot(root: Path, repo: Path) -> dict[str, tuple]:
    """Every file, link and empty folder under `root`, by path relative to `repo`."""
    seen: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root):
        if not dirs and not files:
            seen[os.path.relpath(folder, repo)] = ("dir",)
        for name in [*dirs, *files]:
            path = Path(folder, name)
            key = os.path.relpath(path, repo)
            if path.is_symlink():
                seen[key] = ("link", os.readlink(path))
            elif path.is_file():
                seen[key] = ("file", os.access(path, os.X_OK), path.read_bytes())
    return seen


def applied(template: Path, patch: str, exclude: list[str] | None = None) -> tuple[bool, set[str], set[str]]:
    """Apply to a fresh copy: whether git applied it, the paths that changed, and those now links or gitlinks."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(template, repo, symlinks=True)
        before = snapshot(Path(tmp), repo)
        ok = hostgit.apply(repo, patch, exclude or [])
        after = snapshot(Path(tmp), repo)
        changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
        # folders git made or removed around the files it wrote are no change of their own
        changed = {p for p in changed if not (after.get(p, before.get(p)) == ("dir",)
                                               and any(q.startswith(p + "/") for q in changed))}
        links = {p for p in changed if after.get(p, ("",))[0] in ("link", "dir")}
        return ok, changed, links


def _check(template: Path, patch: str) -> None:
    listing = hostgit.listing(template, patch)
    whole, touched, _ = applied(template, patch)
    if listing.error:
        assert not touched, (listing.error, touched)
        return
    listed = {p for c in listing.changes for p in c.paths}
    assert touched <= listed, ("git changed paths it did not list", touched - listed)
    if mode_refusal(patch):
        return
    decision = apply_policy(listing.changes, RepoFacts(files=listing.files, links=listing.links,
                                                       importable=FALLBACK_IMPORTABLE))
    if decision.rejected:
        return
    kept = {p for c in decision.kept for p in c.paths}
    left_out = {p for c in (*decision.dropped, *decision.ignored) for p in c.paths}
    ok, changed, links = applied(template, patch, decision.excluded)
    assert changed <= kept, ("git changed paths the policy did not keep", changed - kept)
    assert not links, ("a kept change made a link or a gitlink", links)
    if whole and ok:  # and what the policy kept is what git applied: no more was left out
        assert (touched & kept) - left_out <= changed, ("git left out kept paths", (touched & kept) - left_out - changed)


HAND_MADE = [
    # a new file after a hunk, without a header of its own
    "diff --git a/toy/core.py b/toy/core.py\n--- a/toy/core.py\n+++ b/toy/core.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    "--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1 @@\n+x\n",
    # a header broken by U+0085 / U+2028 for Python, whole for git
    "diff --git a/toy/ok.py b/toy/ok.py\u0085\nnew file mode 100644\nsimilarity index 0%\u2028@@\n"
    "--- /dev/null\n+++ b/toy/x.py\n@@ -0,0 +1 @@\n+x\n",
    # mnemonic prefixes, quoted non-ASCII names, a rename of a test into the package
    "diff --git i/toy/core.py w/toy/core.py\n--- i/toy/core.py\n+++ w/toy/core.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    'diff --git "a/caf\\303\\251.py" "b/toy/caf\\303\\251.py"\nsimilarity index 100%\n'
    'rename from "caf\\303\\251.py"\nrename to "toy/caf\\303\\251.py"\n'
    "diff --git a/tests/test_core.py b/toy/moved.py\nsimilarity index 100%\nrename from tests/test_core.py\nrename to toy/moved.py\n",
    # the same name twice: a kept section and a dropped rename onto it
    "diff --git a/toy/new.py b/toy/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/toy/new.py\n@@ -0,0 +1 @@\n+x\n"
    "diff --git a/tests/test_core.py b/toy/new.py\nsimilarity index 100%\nrename from tests/test_core.py\nrename to toy/new.py\n",
    # a link and a gitlink made from nothing
    "diff --git a/toy/new.py b/toy/new.py\nnew file mode 120000\n--- /dev/null\n+++ b/toy/new.py\n@@ -0,0 +1 @@\n"
    "+/etc/passwd\n\\ No newline at end of file\n"
    f"diff --git a/sub b/sub\nnew file mode 160000\nindex {ZERO_ID}..{BINARY_ID}\n--- /dev/null\n+++ b/sub\n"
    f"@@ -0,0 +1 @@\n+Subproject commit {BINARY_ID}\n",
    # wildmatch characters in a name that is left out, and a kept name they would match unescaped
    "diff --git a/a[b]*.py b/a[b]*.py\n--- a/a[b]*.py\n+++ b/a[b]*.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    f"diff --git a/new[1]?.py b/new[1]?.py\nnew file mode 100644\nindex {ZERO_ID}..{BINARY_ID}\nGIT binary patch\n{BINARY}"
    "diff --git a/new1x.py b/new1x.py\nnew file mode 100644\n--- /dev/null\n+++ b/new1x.py\n@@ -0,0 +1 @@\n+x\n",
]


@pytest.mark.parametrize("patch", HAND_MADE)
def test_hand_made_hostile_diffs(template, patch):
    _check(template, patch)


@settings(max_examples=250, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(patch=patches())
@example(patch=HAND_MADE[0])
def test_policy_and_git_agree_on_what_a_patch_changes(template, patch):
    _check(template, patch)
