"""The diff policy judges what git reads in a patch: rules as data, git's reading on the host."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory.verify.gitread import _literal, parse_probe
from factory.verify.packaging import packaging_configuration
from factory.verify.policy import (
    FLAGS_PER_KIND,
    Change,
    RepoFacts,
    apply_policy,
    is_test_path,
    mode_refusal,
    module_dirs,
)
from tests.verify import hostgit
from tests.verify.conftest import BUG, git, texts
from tests.verify.test_attacks import REPORT_HOOK

IMPORTABLE = frozenset({"json", "os", "pytest", "_pytest", "pluggy", "attr", "toy", "unittest", "test"})


def judge(*changes: Change, **facts):
    return apply_policy(changes, RepoFacts(importable=IMPORTABLE, **facts))


# ---------------------------------------------------------------------- rules on paths


@pytest.mark.parametrize(("path", "test"), [
    ("tests/test_core.py", True), ("tests/data/case.json", True), ("test/helpers.py", True),
    ("testing/plugin.py", True), ("toy/tests/helpers.py", True), ("src/tests/__init__.py", True),
    ("toy/test_x.py", True), ("toy/x_test.py", True), ("toy/conftest.py", True), ("app/tests.py", True),
    ("numpy/testing/utils.py", False), ("django/test/client.py", False), ("src/testing/__init__.py", False),
    ("toy/core.py", False), ("toy/testament.py", False), ("docs/test_plan.md", False), ("contest.py", False),
])
def test_what_a_test_path_is(path, test):
    assert is_test_path(path) is test


@pytest.mark.parametrize(("path", "why"), [
    ("../escape.py", "outside the repo"), ("/etc/cron.d/x", "outside the repo"), ("a//b.py", "outside the repo"),
    ("a/./b.py", "outside the repo"),
    (".git/config", "inside .git"), ("toy/.GIT/hooks/x", "inside .git"), (".git./x", "inside .git"),
    ("caf\udce9.py", "not UTF-8"), ("a\nb.py", "control characters"), ("a\u2028b.py", "control characters"),
    ("a\x85b.py", "control characters"),
    ("toy/x.pth", "start-up hook"), ("sitecustomize.py", "start-up hook"), ("sitecustomize/__init__.py", "start-up hook"),
    ("lib/usercustomize/hook.py", "start-up hook"), ("toy/usercustomize.py", "start-up hook"),
    ("json.py", "shadows 'json'"), ("json.abi3.so", "shadows 'json'"), ("pytest/__init__.py", "shadows 'pytest'"), ("src/attr/__init__.py", "shadows 'attr'"),
])
def test_refused_paths(path, why):
    decision = judge(Change(path))
    assert why in decision.rejected
    assert texts(decision.flags) == [f"refused: {decision.rejected}"]


@pytest.mark.parametrize("path", ["a\\b.py", "toy/with space.py", "toy/it's \"quoted\".py", "toy/-dash.py", "toy/naïve.py",
                                  "toy/[x]*?.py", "-x/--y.py"])
def test_odd_but_legal_posix_names_are_kept(path):
    decision = judge(Change(path))
    assert decision.rejected is None and decision.kept == [Change(path)]


@pytest.mark.parametrize("path", ["conftest.py", "tests/conftest.py", "toy/sub/conftest.py", "tox.ini", "pytest.ini",
                                  ".pytest.ini", "pytest.toml", "toy/noxfile.py"])
def test_test_configuration_is_dropped_with_a_flag_not_refused(path):
    decision = judge(Change("toy/core.py"), Change(path))
    assert decision.rejected is None
    assert decision.kept == [Change("toy/core.py")] and decision.excluded == [path]
    assert texts(decision.flags) == [f"dropped test configuration: {path}"]


def test_refusals_read_both_names_of_a_rename_and_links_from_the_start_state():
    assert "outside" in judge(Change("toy/ok.py", source="../x.py")).rejected
    # a rename out of (or into) a conftest is left out whole: the start state's conftest stays
    assert judge(Change("toy/ok.py", source="conftest.py")).excluded == ["toy/ok.py"]
    links = frozenset({"docs/link", "vendor/sub"})
    assert "symlink or submodule at docs/link" in judge(Change("docs/link"), links=links).rejected
    assert "symlink or submodule" in judge(Change("vendor/sub/x.py"), links=links).rejected


def test_dropped_ignored_and_kept():
    decision = judge(
        Change("toy/core.py"), Change("tests/test_mine.py"), Change("toy/data.bin", binary=True),
        Change("toy/__pycache__/core.cpython-311.pyc", binary=True), Change("toy/stale.pyc", binary=True),
        Change("toy.egg-info/PKG-INFO"), Change("toy/moved.py", source="tests/test_core.py"),
        Change("numpy/testing/utils.py"),
    )
    assert decision.rejected is None
    assert [c.path for c in decision.kept] == ["toy/core.py", "numpy/testing/utils.py"]
    assert decision.excluded == sorted([
        "tests/test_mine.py", "toy/data.bin", "toy/__pycache__/core.cpython-311.pyc", "toy/stale.pyc",
        "toy.egg-info/PKG-INFO", "toy/moved.py",
    ])
    assert texts(decision.flags) == [
        "dropped test change: tests/test_mine.py", "dropped binary file: toy/data.bin",
        "dropped test change: toy/moved.py", "changes library test support: numpy/testing/utils.py",
    ]


def test_thousands_of_dropped_files_are_named_in_a_few_flags():
    decision = judge(Change("toy/core.py"), *(Change(f"tests/data/case_{i}.json") for i in range(5000)))
    assert len(decision.excluded) == 5000 and decision.kept == [Change("toy/core.py")]
    assert len(decision.flags) == FLAGS_PER_KIND + 1
    assert texts(decision.flags)[-1] == f"dropped test change: {5000 - FLAGS_PER_KIND} more"


def test_a_kept_section_that_shares_its_name_with_a_dropped_one_is_left_out_with_it():
    decision = judge(Change("toy/a.py"), Change("toy/a.py", source="tests/test_a.py"))
    assert decision.kept == [] and decision.excluded == ["toy/a.py"]
    assert "dropped with a left-out section of the same name: toy/a.py" in texts(decision.flags)


def test_shadowing_is_judged_against_what_the_image_imports_in_folders_on_sys_path():
    files = frozenset({"toy/__init__.py", "toy/core.py", "json.py", "lib/pkg/__init__.py"})
    assert judge(Change("json.py"), files=files).rejected is None  # not new: the repo's own
    assert judge(Change("toyhelpers.py")).rejected is None  # new, but nothing imports that name
    assert judge(Change("toy/json.py"), files=files).rejected is None  # a submodule, not top-level
    dirs = module_dirs(files, ["/usr/lib/python3.11", "/testbed/lib", "/testbed"], "/testbed", [])
    assert dirs == {"", "src", "lib"}
    assert "shadows 'os'" in judge(Change("lib/os.py"), files=files, module_dirs=dirs).rejected
    assert judge(Change("lib/pkg/os.py"), files=files, module_dirs=dirs).rejected is None


def test_folders_pytest_puts_on_sys_path_for_the_tests_and_conftests():
    files = {"pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/tests/test_a.py", "tests/test_b.py",
             "tests/unit/__init__.py", "tests/unit/test_c.py", "docs/conftest.py"}
    tests = ["pkg/sub/tests/test_a.py", "tests/test_b.py", "tests/unit/test_c.py"]
    assert module_dirs(files, [], "/testbed", tests) == {"", "src", "pkg/sub/tests", "tests", "docs"}


def test_mode_lines_other_than_a_regular_files_refuse_before_git_runs():
    ok = "diff --git a/x b/x\nold mode 100644\r\nnew mode 100755\nindex 1234abc..5678def 100644\n"
    assert mode_refusal(ok) is None
    for line in ["new file mode 120000", "new mode 160000", "deleted file mode 120000", "old mode 0120000",
                 "new file mode +100644", "new file mode 3120000", "new file mode  100644",
                 "index 1234abc..5678def 120000", "index 1234abc..5678def 100644 120000", "index 1234\u2028..5678"]:
        assert "mode" in mode_refusal(f"diff --git a/x b/x\n{line}\n--- a/x\n"), line
    # a U+2028 does not end a line for git: what follows it is on the same line
    assert mode_refusal("new file mode 100644\u2028index 1..2 120000\n")


# ---------------------------------------------------------------------- packaging files


@pytest.mark.parametrize(("path", "before", "after", "refused"), [
    ("pyproject.toml", '[project]\nname = "toy"\n',
     '[project]\nname = "toy"\n\n[project.optional-dependencies]\ntest = [\n  "pytest>=7",\n  "pytest-cov",\n]\n', False),
    ("pyproject.toml", None, '[dependency-groups]\ndev = ["pytest"]\n[tool.poetry.group.test.dependencies]\npytest = "^8"\n', False),
    ("pyproject.toml", '[project]\nname = "toy"\n', '[project]\nname = "toy"\n[tool.pytest.ini_options]\naddopts = "-x"\n', True),
    ("pyproject.toml", "", "[tool.pytest]\n", True),
    ("pyproject.toml", '[project]\nname = "toy"\n', '[project.entry-points.pytest11]\nevil = "toy.evil"\n', True),
    ("pyproject.toml", "", '[tool.other]\ntestpaths = ["x"]\n', False),  # pytest reads no other tool's table
    ("pyproject.toml", "", '[tool.uv]\ndev-dependencies = ["pytest>=8", "pytest-cov>=5"]\n', False),
    ("pyproject.toml", "", '[[tool.mypy.overrides]]\nmodule = ["pytest", "_pytest.*"]\nignore_missing_imports = true\n', False),
    ("pyproject.toml", "", '[tool.pytest.ini_options]\nminversion = "6"\n', True),
    ("pyproject.toml", "", "[project\nthis is not toml\n[tool.pytest.ini_options]\nx = 1\n", True),
    ("pyproject.toml", "", '[project\noptional = ["pytest>=7"]\n', False),
    ("setup.cfg", "[metadata]\nname = toy\n", "[metadata]\nname = toy\n[options.extras_require]\ntest =\n    pytest>=7\n", False),
    ("setup.cfg", "", "[tool:pytest]\naddopts = --co\n", True),
    ("setup.cfg", "", "[options.entry_points]\npytest11 =\n    evil = toy.evil\n", True),
    ("setup.py", "from setuptools import setup\nsetup(name='toy')\n",
     "from setuptools import setup\nsetup(name='toy', extras_require={'test': ['pytest>=7', \"pytest-cov\"]})\n", False),
    ("setup.py", "", "setup(entry_points={'pytest11': ['evil = toy.evil']})\n", True),
])
def test_packaging_files(path, before, after, refused):
    why = packaging_configuration(path, None if before is None else before.encode(), after.encode())
    assert (why is not None) is refused, why


def test_probe_output_and_wildmatch_literals():
    out = 'conda says hi\nfactory-interpreter {"names": ["json", "toy"], "path": ["/testbed"]}\n'
    assert parse_probe(out).importable == {"json", "toy"}
    assert parse_probe("Traceback") is None
    assert _literal("a[b]*?\\.py") == "a\\[b]\\*\\?\\\\.py"


# ---------------------------------------------------------------------- git's reading, on the host


@pytest.fixture
def repo(agent_repo) -> Path:
    return agent_repo


def diff(repo: Path, *options: str, config: tuple[str, ...] = ()) -> str:
    """`git diff --cached --binary` of the whole work tree, with more options and config."""
    git(repo, "add", "-A")
    return git(repo, *config, "diff", "--cached", "--binary", *options)


def fix(repo: Path) -> None:
    core = repo / "toy/core.py"
    core.write_text(core.read_text().replace(BUG[1], BUG[0]))


def test_mnemonic_and_missing_prefixes_are_read_as_git_applies_them(repo):
    (repo / "pytest").mkdir()
    (repo / "pytest/__init__.py").write_text("def main(*a, **k):\n    return 0\n")
    mnemonic = diff(repo, config=("-c", "diff.mnemonicPrefix=true"))
    assert "+++ i/pytest/__init__.py" in mnemonic
    assert "shadows 'pytest'" in hostgit.judge(repo, mnemonic, importable=IMPORTABLE).rejected
    git(repo, "reset", "-q", "--hard")
    (repo / "x").mkdir()
    (repo / "x/json.py").write_text("raise SystemExit(0)\n")
    bare = diff(repo, "--no-prefix")
    assert "+++ x/json.py" in bare
    # git strips the first folder whatever it is: this creates json.py at the root
    assert [c.path for c in hostgit.listing(repo, bare).changes] == ["json.py"]
    assert "shadows 'json'" in hostgit.judge(repo, bare, importable=IMPORTABLE).rejected


def test_a_section_after_a_hunk_without_its_own_header_is_judged(repo):
    fix(repo)
    patch = diff(repo) + "--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1,8 @@\n" + "".join(
        "+" + line + "\n" for line in REPORT_HOOK.splitlines())
    git(repo, "reset", "-q", "--hard")
    assert hostgit.apply(repo, patch) and (repo / "conftest.py").exists()  # git applies it
    git(repo, "reset", "-q", "--hard")
    (repo / "conftest.py").unlink()
    decision = hostgit.judge(repo, patch)
    assert decision.excluded == ["conftest.py"] and "dropped test configuration: conftest.py" in texts(decision.flags)
    assert hostgit.apply(repo, patch, decision.excluded)  # the cut patch, as git lists it: the fix alone
    assert not (repo / "conftest.py").exists() and "hi + 1" not in (repo / "toy/core.py").read_text()


def test_header_lines_broken_by_unicode_line_separators_are_read_as_git_reads_them(repo):
    # Python's splitlines() ends lines at U+0085 and U+2028, git does not: a reader that splits
    # there sees a hunk start ("@@") early and stops reading before the real file name.
    hook = "".join("+" + line + "\n" for line in REPORT_HOOK.splitlines())
    patch = (
        "diff --git a/toy/ok.py b/toy/ok.py\u0085\nnew file mode 100644\nsimilarity index 0%\u2028@@\n"
        f"--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1,8 @@\n{hook}"
    )
    assert "toy/ok.py" in patch.splitlines()[0] and patch.splitlines()[4] == "@@"
    assert hostgit.apply(repo, patch) and (repo / "conftest.py").exists()
    git(repo, "reset", "-q", "--hard")
    assert [c.path for c in hostgit.listing(repo, patch).changes] == ["conftest.py"]
    assert hostgit.judge(repo, patch).excluded == ["conftest.py"]


def test_quoted_non_ascii_and_wildmatch_names_are_kept_and_applied(repo):
    fix(repo)
    (repo / "toy/café.py").write_text("OFFSET = 0\n")
    (repo / "toy/a[1]*?.py").write_text("x = 1\n")
    (repo / "tests/test_café.py").write_text("def test_x():\n    pass\n")
    patch = diff(repo)
    assert '"b/toy/caf\\303\\251.py"' in patch
    git(repo, "reset", "-q", "--hard")
    decision = hostgit.judge(repo, patch, importable=IMPORTABLE)
    assert decision.rejected is None
    assert sorted(c.path for c in decision.kept) == ["toy/a[1]*?.py", "toy/café.py", "toy/core.py"]
    assert decision.excluded == ["tests/test_café.py"]
    assert hostgit.apply(repo, patch, decision.excluded)
    assert (repo / "toy/café.py").read_text() == "OFFSET = 0\n" and (repo / "toy/a[1]*?.py").exists()
    assert not (repo / "tests/test_café.py").exists()


def test_renames_copies_binaries_and_artifacts_from_real_git_diffs(repo):
    fix(repo)
    (repo / "toy/data.bin").write_bytes(b"\x00\x01\x02" * 50)
    (repo / "toy/__pycache__").mkdir()
    (repo / "toy/__pycache__/core.cpython-311.pyc").write_bytes(b"\x00pyc")
    git(repo, "mv", "tests/test_pairs.py", "toy/pairs_check.py")
    patch = diff(repo, "-M")
    assert "rename from tests/test_pairs.py" in patch
    git(repo, "reset", "-q", "--hard")
    decision = hostgit.judge(repo, patch, importable=IMPORTABLE)
    assert [c.path for c in decision.kept] == ["toy/core.py"]
    assert {c.path: c.source for c in decision.dropped} == {"toy/data.bin": None, "toy/pairs_check.py": "tests/test_pairs.py"}
    assert [c.path for c in decision.ignored] == ["toy/__pycache__/core.cpython-311.pyc"]
    assert hostgit.apply(repo, patch, decision.excluded)
    assert (repo / "tests/test_pairs.py").exists() and not (repo / "toy/data.bin").exists()
    assert not (repo / "toy/__pycache__").exists() and "hi + 1" not in (repo / "toy/core.py").read_text()


def test_symlinks_made_by_git_diff_and_symlinks_of_the_start_state_are_refused(repo):
    (repo / "toy/link.py").symlink_to("/etc/passwd")
    assert "symlink" in mode_refusal(diff(repo))
    git(repo, "commit", "-qm", "a link in the start state")
    (repo / "toy/link.py").unlink()
    (repo / "toy/link.py").symlink_to("/etc/shadow")
    retarget = diff(repo)
    assert "index " in mode_refusal(retarget)  # git diff names the link's mode on its index line
    # without that line, nothing in the patch says "link": the start state does
    retarget = "".join(line for line in retarget.splitlines(keepends=True) if not line.startswith("index "))
    assert mode_refusal(retarget) is None
    assert "symlink or submodule at toy/link.py" in hostgit.judge(repo, retarget).rejected


def test_patches_git_cannot_read_are_reported_as_such(repo):
    assert hostgit.listing(repo, "just some text\n").error
    assert hostgit.listing(repo, "diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n").error


def test_outside_paths_in_a_hand_made_patch_are_read_by_git_and_refused(repo):
    outside = (
        "diff --git a/../escape.py b/../escape.py\nnew file mode 100644\n--- /dev/null\n+++ b/../escape.py\n"
        "@@ -0,0 +1 @@\n+x = 1\n"
    )
    assert "outside the repo" in hostgit.judge(repo, outside).rejected
    assert hostgit.judge(repo, outside.replace("../escape.py", "/etc/cron.d/x")).rejected
    assert "inside .git" in hostgit.judge(repo, outside.replace("../escape.py", ".git/hooks/pre-commit")).rejected
