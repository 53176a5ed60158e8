"""The verifier's git, run on the host against a checkout: the same listing script, the same apply."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from factory.sandbox.git import git
from factory.verify.gitread import (
    Listing,
    apply_files,
    apply_script,
    listing_script,
    may_lack_prefixes,
    parse_listing,
)
from factory.verify.policy import Decision, RepoFacts, apply_policy, mode_refusal, refused
from factory.verify.sections import has_zero_context_hunk


def factory_git(repo: Path) -> str:
    return git(str(repo / ".git"), str(repo))


def listing(repo: Path, patch: str) -> Listing:
    with tempfile.TemporaryDirectory() as tmp:
        patch_file, out = Path(tmp) / "agent.patch", Path(tmp) / "out"
        patch_file.write_bytes(patch.encode())
        zero = has_zero_context_hunk(patch)
        script = listing_script(str(patch_file), str(out), factory_git(repo), may_lack_prefixes(patch), zero)
        subprocess.run(["bash", "-c", script],
                       cwd=repo, check=True, capture_output=True)
        listed = parse_listing((out / "all").read_bytes())
        listed.zero_context = zero
        return listed


def apply(repo: Path, patch: str, exclude: Iterable[str] = ()) -> bool:
    return apply_status(repo, patch, exclude) == 0


def apply_status(repo: Path, patch: str, exclude: Iterable[str] = ()) -> int:
    """The verifier's apply of `patch` less the sections named `exclude`: 0, 1 (git failed) or 2
    (a hunk without context found away from its line)."""
    listed = listing(repo, patch)  # as the verifier applies it: stripped and cut as it was listed
    with tempfile.TemporaryDirectory() as tmp:
        patch_file = Path(tmp) / "agent.patch"
        patch_file.write_bytes(patch.encode())
        files = apply_files(patch, listed, exclude, out=tmp)
        for name, data in files.items():
            Path(name).write_bytes(data)
        script = apply_script(str(patch_file), f"{tmp}/errors", 1, files=files, out=tmp, git=factory_git(repo),
                              strip=listed.strip, zero_context=listed.zero_context, misplaced=2)
        return subprocess.run(["bash", "-c", script], cwd=repo, capture_output=True).returncode


def judge(repo: Path, patch: str, **facts) -> Decision:
    """The verifier's judgement of `patch` against `repo`'s committed state (facts as given)."""
    why = mode_refusal(patch)
    if why:
        return refused(why)
    listed = listing(repo, patch)
    assert listed.error is None, listed.error
    return apply_policy(listed.changes, RepoFacts(files=listed.files, links=listed.links, **facts))
