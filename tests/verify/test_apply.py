"""What is applied of a patch: exactly the sections the policy kept, at the lines they name, for
a patch of any size, with any name POSIX allows. Patches are real `git diff`s of the agent's
repo (hand-made only where git never writes such a diff); on the host with the verifier's own
scripts (`hostgit`), then verified for real."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from factory.records import Reason
from factory.verify import sections
from factory.verify.gitread import apply_files, apply_script
from factory.verify.policy import FLAGS_PER_KIND
from tests.verify import hostgit
from tests.verify.conftest import BUG, git, texts
from tests.verify.test_attacks import CORE

INSERTED_FIX = ("    if x < lo:\n        return lo\n", "    if x < lo:\n        return lo\n    if x == hi + 1:\n        return hi\n")
"""A fix that only adds lines: `git diff -U0` gives a hunk with no line around it."""


def staged(repo: Path, *options: str) -> str:
    git(repo, "add", "-A")
    patch = git(repo, "diff", "--cached", "--binary", *options)
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-qfdx")
    return patch


def edit(repo: Path, path: str, old: str, new: str) -> None:
    target = repo / path
    target.write_text(target.read_text().replace(old, new, 1))


def fixtures(repo: Path, count: int) -> None:
    """`count` files the policy drops: test data, as a large fixture set would be."""
    folder = repo / "tests/fixtures"
    folder.mkdir(parents=True)
    for i in range(count):
        (folder / f"case_{i:05d}.json").write_text(f'{{"case": {i}}}\n')


def fixed(repo: Path) -> str:
    return (repo / CORE).read_text()


# ---------------------------------------------------------------------- on the host


def test_git_made_patches_are_cut_where_git_lists_their_sections(agent_repo):
    edit(agent_repo, CORE, BUG[1], BUG[0])
    (agent_repo / "toy/data.bin").write_bytes(bytes(range(256)))
    (agent_repo / "toy/__init__.py").chmod(0o755)
    git(agent_repo, "mv", "tests/test_pairs.py", "toy/pairs_check.py")
    (agent_repo / "toy/empty.py").write_text("")
    for options in [("-M",), ("-U0",), ("--no-prefix",), ("-M", "-U0", "--no-prefix")]:
        git(agent_repo, "add", "-A")
        patch = git(agent_repo, "diff", "--cached", "--binary", *options)
        pieces = sections.split(patch)
        assert "".join(pieces) == patch
        assert len(pieces) == len(hostgit.listing(agent_repo, patch).changes) == 5, options


@pytest.mark.parametrize("count", [5000, 50000])
def test_any_number_of_dropped_files_is_left_out_without_a_command_line_naming_them(agent_repo, count):
    edit(agent_repo, CORE, BUG[1], BUG[0])
    fixtures(agent_repo, count)
    patch = staged(agent_repo)
    decision = hostgit.judge(agent_repo, patch)
    assert len(decision.excluded) == count and len(decision.flags) == FLAGS_PER_KIND + 1
    files = apply_files(patch, hostgit.listing(agent_repo, patch), decision.excluded)
    assert "/tmp/factory-policy/kept.patch" in files  # the cut patch: no name on any command line
    assert hostgit.apply(agent_repo, patch, decision.excluded)
    assert "hi + 1" not in fixed(agent_repo) and not (agent_repo / "tests/fixtures").exists()


def test_a_patch_cut_other_than_git_reads_it_falls_back_to_naming_what_is_left_out(agent_repo):
    """A line git skips as noise starts a piece of its own: more pieces than git lists, no cut."""
    edit(agent_repo, CORE, BUG[1], BUG[0])
    fix = staged(agent_repo).replace(f"diff --git a/{CORE} b/{CORE}\n", f"diff --git a/{CORE} b/{CORE}\ndiff noise\n")
    patch = fix + "--- /dev/null\n+++ b/tests/test_mine.py\n@@ -0,0 +1 @@\n+x = 1\n"
    listed = hostgit.listing(agent_repo, patch)
    assert [c.path for c in listed.changes] == [CORE, "tests/test_mine.py"] and len(sections.split(patch)) == 3
    assert "/tmp/factory-policy/kept.patch" not in apply_files(patch, listed, ["tests/test_mine.py"])
    assert hostgit.apply(agent_repo, patch, ["tests/test_mine.py"])
    assert "hi + 1" not in fixed(agent_repo) and not (agent_repo / "tests/test_mine.py").exists()


def test_a_cut_patch_that_git_lists_otherwise_than_the_kept_sections_is_not_applied(agent_repo, tmp_path):
    """Whatever the cut holds, it is applied only when git lists it as the kept sections alone."""
    edit(agent_repo, CORE, BUG[1], BUG[0])
    (agent_repo / "conftest.py").write_text("raise SystemExit\n")
    patch = staged(agent_repo)
    listed = hostgit.listing(agent_repo, patch)
    files = apply_files(patch, listed, ["conftest.py"], out=str(tmp_path))
    files[f"{tmp_path}/kept.patch"] = patch.encode()  # a cut gone wrong: the left-out section still in
    for name, data in files.items():
        Path(name).write_bytes(data)
    (tmp_path / "agent.patch").write_text(patch)
    script = apply_script(str(tmp_path / "agent.patch"), str(tmp_path / "errors"), 1, files=files, out=str(tmp_path),
                          git=hostgit.factory_git(agent_repo), strip=listed.strip)
    subprocess.run(["bash", "-c", script], cwd=agent_repo, check=True)
    assert "hi + 1" not in fixed(agent_repo) and not (agent_repo / "conftest.py").exists()


def test_a_hunk_without_context_applies_at_its_line_where_strict_git_would_put_it_at_the_end(agent_repo):
    edit(agent_repo, CORE, *INSERTED_FIX)
    patch = staged(agent_repo, "-U0")
    assert sections.has_zero_context_hunk(patch) and not sections.has_zero_context_hunk(staged_fix(agent_repo))
    subprocess.run(["git", "apply", "-"], input=patch, text=True, cwd=agent_repo, check=True)
    assert fixed(agent_repo).endswith(INSERTED_FIX[1][-34:])  # strict git: at the end, after parse_pair's return
    git(agent_repo, "checkout", "-q", CORE)
    assert hostgit.apply_status(agent_repo, patch) == 0
    assert INSERTED_FIX[1] in fixed(agent_repo)


def test_a_hunk_without_context_whose_lines_are_elsewhere_is_not_applied(agent_repo):
    edit(agent_repo, CORE, BUG[1], BUG[0])
    patch = staged(agent_repo, "-U0")
    assert "@@ -9 +9 @@" in patch
    assert hostgit.apply_status(agent_repo, patch.replace("@@ -9 +9 @@", "@@ -3 +3 @@")) == 2  # found 6 lines off


def staged_fix(repo: Path) -> str:
    edit(repo, CORE, BUG[1], BUG[0])
    return staged(repo)


# ---------------------------------------------------------------------- verified


@pytest.mark.docker
@pytest.mark.parametrize("count", [5000, 50000])
async def test_a_fix_and_a_non_fix_with_thousands_of_dropped_files_get_verdicts(agent_repo, toy_task, verifier, count):
    fixtures(agent_repo, count)
    broken = staged(agent_repo)
    fixtures(agent_repo, count)
    edit(agent_repo, CORE, BUG[1], BUG[0])
    fix = staged(agent_repo)
    verdict = await verifier.verify(toy_task, fix)
    assert verdict.resolved, verdict.detail
    assert f"dropped test change: {count - FLAGS_PER_KIND} more" in texts(verdict.flags)
    verdict = await verifier.verify(toy_task, broken)
    assert (verdict.resolved, verdict.reason) == (False, Reason.tests_failed), verdict.detail


@pytest.mark.docker
async def test_a_fix_made_with_git_diff_U0_resolves(agent_repo, toy_task, verifier):
    edit(agent_repo, CORE, *INSERTED_FIX)
    verdict = await verifier.verify(toy_task, staged(agent_repo, "-U0"))
    assert verdict.resolved, verdict


@pytest.mark.docker
async def test_a_U0_patch_whose_lines_point_elsewhere_is_not_applied_elsewhere(agent_repo, toy_task, verifier):
    edit(agent_repo, CORE, BUG[1], BUG[0])
    patch = staged(agent_repo, "-U0").replace("@@ -9 +9 @@", "@@ -3 +3 @@")
    verdict = await verifier.verify(toy_task, patch)
    assert (verdict.resolved, verdict.reason) == (False, Reason.patch_failed), verdict
    assert "does not apply at the line it names" in verdict.detail


ODD_NAMES = ["back\\slash.txt", "with space.txt", "it's \"quoted\".txt", "-dash.txt", "naïve.txt", "--exclude=x.txt"]


@pytest.mark.docker
async def test_a_fix_that_reads_files_with_odd_but_legal_names_resolves(agent_repo, toy_task, verifier):
    """Each file holds a 0 the fix adds to its bound: one left out or misplaced fails the tests."""
    for name in ODD_NAMES:
        (agent_repo / "toy" / name).write_text("0\n")
    reader = ("import pathlib\n\nOFFSET = sum(int((pathlib.Path(__file__).parent / name).read_text()) "
              f"for name in {ODD_NAMES!r})\n\n\n")
    edit(agent_repo, CORE, "def add", reader + "def add")
    edit(agent_repo, CORE, BUG[1], "    if x > hi + OFFSET:\n")
    verdict = await verifier.verify(toy_task, staged(agent_repo))
    assert verdict.resolved, verdict


@pytest.mark.docker
async def test_a_fix_with_thousands_of_packaging_files_resolves(agent_repo, toy_task, verifier):
    """Each is read before and after the patch; none named on a command line."""
    for i in range(3000):
        (agent_repo / f"plugins/plugin_{i:04d}").mkdir(parents=True)
        (agent_repo / f"plugins/plugin_{i:04d}/setup.py").write_text(f"from setuptools import setup\nsetup(name='p{i}')\n")
    edit(agent_repo, CORE, BUG[1], BUG[0])
    verdict = await verifier.verify(toy_task, staged(agent_repo))
    assert verdict.resolved, verdict.detail
