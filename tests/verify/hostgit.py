"""The verifier's git, run on the host against a checkout: the same listing script, the same apply."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from factory.sandbox.git import git
from factory.verify.gitread import (
    Listing,
    apply_command,
    listing_script,
    may_lack_prefixes,
    parse_listing,
)
from factory.verify.policy import Decision, RepoFacts, apply_policy, mode_refusal, refused


def factory_git(repo: Path) -> str:
    return git(str(repo / ".git"), str(repo))


def listing(repo: Path, patch: str) -> Listing:
    with tempfile.TemporaryDirectory() as tmp:
        patch_file, out = Path(tmp) / "agent.patch", Path(tmp) / "out"
        patch_file.write_bytes(patch.encode())
        script = listing_script(str(patch_file), str(out), factory_git(repo), may_lack_prefixes(patch))
        subprocess.run(["bash", "-c", script],
                       cwd=repo, check=True, capture_output=True)
        return parse_listing((out / "all").read_bytes())


def apply(repo: Path, patch: str, exclude: Iterable[str] = ()) -> bool:
    strip = listing(repo, patch).strip  # as the verifier applies it: stripped as it was listed
    with tempfile.TemporaryDirectory() as tmp:
        patch_file = Path(tmp) / "agent.patch"
        patch_file.write_bytes(patch.encode())
        command = apply_command(str(patch_file), exclude, factory_git(repo), strip)
        return subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True).returncode == 0


def judge(repo: Path, patch: str, **facts) -> Decision:
    """The verifier's judgement of `patch` against `repo`'s committed state (facts as given)."""
    why = mode_refusal(patch)
    if why:
        return refused(why)
    listed = listing(repo, patch)
    assert listed.error is None, listed.error
    return apply_policy(listed.changes, RepoFacts(files=listed.files, links=listed.links, **facts))
