"""The diff policy end to end on the toy task: what git would apply is judged, and right fixes
the old text reading refused now resolve. Patches are made by `git diff` (with its prefix and
quoting options) in the agent's repo, or by hand where only a hand-made diff can do it."""

from __future__ import annotations

import pytest

from factory.records import Reason
from tests.verify.conftest import git, texts
from tests.verify.test_attacks import CORE, CORE_TEXT, REPORT_HOOK

pytestmark = pytest.mark.docker

HOOK_HUNK = "@@ -0,0 +1,8 @@\n" + "".join("+" + line + "\n" for line in REPORT_HOOK.splitlines())


def core_using(module: str) -> dict[str, str]:
    """toy/core.py fixed, with the fix's constant imported from `module`: dropping it fails the tests."""
    fixed = CORE_TEXT.replace("    if x > hi + 1:\n", "    if x > hi + OFFSET:\n")
    return {CORE: f"from {module} import OFFSET\n\n\n{fixed}", f"{module.replace('.', '/')}.py": "OFFSET = 0\n"}


def staged_diff(repo, *options: str, config: tuple[str, ...] = ()) -> str:
    git(repo, "add", "-A")
    return git(repo, *config, "diff", "--cached", "--binary", *options)


async def refused(verifier, task, patch: str, why: str) -> None:
    verdict = await verifier.verify(task, patch)
    assert (verdict.resolved, verdict.reason) == (False, Reason.patch_rejected), verdict
    assert why in verdict.detail, verdict


async def resolved(verifier, task, patch: str) -> list[str]:
    verdict = await verifier.verify(task, patch)
    assert verdict.resolved, verdict
    return texts(verdict.flags)


# ---------------------------------------------------------------------- attacks


async def test_a_conftest_section_after_a_hunk_without_its_own_header(make_patch, toy_task, verifier):
    """Left out as git reads it: the report hook never runs, so the fix beside it is judged alone."""
    patch = make_patch({}, fix=True) + "--- /dev/null\n+++ b/conftest.py\n" + HOOK_HUNK.replace("'passed'", "'failed'")
    assert "dropped test configuration: conftest.py" in await resolved(verifier, toy_task, patch)


async def test_a_conftest_behind_header_lines_broken_by_unicode_separators(toy_task, verifier):
    patch = ("diff --git a/toy/ok.py b/toy/ok.py\u0085\nnew file mode 100644\nsimilarity index 0%\u2028@@\n"
             "--- /dev/null\n+++ b/conftest.py\n" + HOOK_HUNK)
    verdict = await verifier.verify(toy_task, patch)
    assert (verdict.resolved, verdict.reason) == (False, Reason.tests_failed), verdict
    assert "dropped test configuration: conftest.py" in texts(verdict.flags)


async def test_a_pytest_shadow_behind_mnemonic_prefixes(agent_repo, toy_task, verifier):
    (agent_repo / "pytest").mkdir()
    (agent_repo / "pytest/__init__.py").write_text("def main(*a, **k):\n    return 0\n")
    patch = staged_diff(agent_repo, config=("-c", "diff.mnemonicPrefix=true"))
    assert "+++ i/pytest/__init__.py" in patch
    await refused(verifier, toy_task, patch, "new module shadows 'pytest'")


async def test_a_stdlib_shadow_behind_a_diff_without_prefixes(agent_repo, toy_task, verifier):
    (agent_repo / "x").mkdir()
    (agent_repo / "x/json.py").write_text("raise SystemExit(0)\n")
    patch = staged_diff(agent_repo, "--no-prefix")  # git applies x/json.py as json.py
    await refused(verifier, toy_task, patch, "new module shadows 'json': json.py")


@pytest.mark.parametrize("path", ["sitecustomize/__init__.py", "toy/usercustomize/__init__.py", "lib/hook.pth"])
async def test_start_up_hooks_in_package_form(path, make_patch, toy_task, verifier):
    await refused(verifier, toy_task, make_patch({path: "import os\nos._exit(0)\n"}, fix=True), "start-up hook")


async def test_a_shadow_of_a_package_the_image_imports_that_no_list_names(make_patch, toy_task, verifier):
    patch = make_patch({"more_itertools.py": "raise SystemExit(0)\n"}, fix=True)
    await refused(verifier, toy_task, patch, "new module shadows 'more_itertools'")


async def test_a_module_pytest_looks_for_at_start_and_does_not_find_is_no_new_name(make_patch, toy_task, verifier):
    """The stdlib's copy.py asks for `org.python.core` (Jython's) at `import pytest`: a new
    top-level `org.py` would run there, before any test, though no installed module has the name."""
    patch = make_patch({"org.py": "import os\nos._exit(0)\n"}, fix=True)
    await refused(verifier, toy_task, patch, "new module shadows 'org'")


async def test_a_pytest_entry_point_in_setup_py(make_patch, toy_task, verifier):
    setup = "from setuptools import setup\n\nsetup(name='toy', entry_points={'pytest11': ['evil = toy.core']})\n"
    verdict = await verifier.verify(toy_task, make_patch({"setup.py": setup}))
    assert (verdict.resolved, verdict.reason) == (False, Reason.tests_failed), verdict
    assert any(f.startswith("dropped test configuration in packaging file: setup.py") for f in texts(verdict.flags))


# ---------------------------------------------------------------------- right fixes that resolve


@pytest.mark.parametrize("package", ["toy.testing", "toy.test"])
async def test_a_fix_in_a_library_subpackage_named_testing_or_test(package, make_patch, toy_task, verifier):
    edits = {**core_using(f"{package}.bounds"), f"{package.replace('.', '/')}/__init__.py": ""}
    flags = await resolved(verifier, toy_task, make_patch(edits))
    assert f"changes library test support: {package.replace('.', '/')}/bounds.py" in flags


async def test_a_fix_in_a_file_with_a_non_ascii_name(make_patch, toy_task, verifier):
    patch = make_patch(core_using("toy.café"))
    assert '"b/toy/caf\\303\\251.py"' in patch
    await resolved(verifier, toy_task, patch)


async def test_a_fix_with_a_new_top_level_module_nothing_imports_yet(make_patch, toy_task, verifier):
    await resolved(verifier, toy_task, make_patch(core_using("toyhelpers")))


async def test_a_fix_with_its_own_test_and_fixture_a_tox_env_and_a_registered_marker(make_patch, toy_task, verifier):
    """What a careful engineer adds beside a fix: all left out, flagged, and the fix resolves."""
    edits = {
        "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef bounds():\n    return 0, 10\n",
        "tests/test_clamp_edges.py": "import pytest\nfrom toy.core import clamp\n\n\n@pytest.mark.edge\n"
                                     "def test_high(bounds):\n    assert clamp(11, *bounds) == 10\n",
        "tox.ini": "[tox]\nenvlist = py311\n\n[testenv]\ncommands = pytest\n\n[pytest]\nmarkers =\n    edge: edge cases\n",
        "pyproject.toml": '[project]\nname = "toy"\nversion = "0"\n\n[tool.pytest.ini_options]\nmarkers = ["edge: edge cases"]\n',
    }
    flags = await resolved(verifier, toy_task, make_patch(edits, fix=True))
    assert {"dropped test configuration: tests/conftest.py", "dropped test configuration: tox.ini",
            "dropped test change: tests/test_clamp_edges.py"} <= set(flags)
    assert any(f.startswith("dropped test configuration in packaging file: pyproject.toml") for f in flags), flags


async def test_a_fix_with_test_extras_in_the_packaging_metadata(make_patch, toy_task, verifier):
    edits = {
        "pyproject.toml": '[project]\nname = "toy"\nversion = "0"\n\n[project.optional-dependencies]\n'
                          'test = ["pytest>=7", "pytest-cov"]\n',
        "setup.cfg": "[metadata]\nname = toy\n\n[options.extras_require]\ntest =\n    pytest>=7\n",
        "setup.py": "from setuptools import setup\n\nsetup(extras_require={'test': ['pytest>=7']})\n",
    }
    await resolved(verifier, toy_task, make_patch(edits, fix=True))


async def test_a_fix_with_stray_bytecode_is_graded_without_a_word(agent_repo, make_patch, toy_task, verifier):
    (agent_repo / "toy/__pycache__").mkdir()
    (agent_repo / "toy/__pycache__/core.cpython-311.pyc").write_bytes(b"\xa7\r\r\n" + bytes(64))
    (agent_repo / "toy/stale.pyc").write_bytes(b"\xa7\r\r\n" + bytes(64))
    patch = make_patch({}, fix=True)
    assert "GIT binary patch" in patch
    flags = await resolved(verifier, toy_task, patch)
    assert not [f for f in flags if f.startswith(("dropped", "refused"))], flags


async def test_a_fix_with_an_unrelated_binary_file_is_graded_without_it(agent_repo, make_patch, toy_task, verifier):
    (agent_repo / "toy/data.bin").write_bytes(b"\x00\x01\x02" * 100)
    flags = await resolved(verifier, toy_task, make_patch({}, fix=True))
    assert "dropped binary file: toy/data.bin" in flags


async def test_a_fix_made_with_mnemonic_prefixes(agent_repo, toy_task, verifier):
    core = agent_repo / CORE
    core.write_text(core.read_text().replace("if x > hi + 1:", "if x > hi:"))
    patch = staged_diff(agent_repo, config=("-c", "diff.mnemonicPrefix=true"))
    assert "--- c/toy/core.py" in patch
    await resolved(verifier, toy_task, patch)


async def test_a_fix_made_without_prefixes_is_applied_as_it_was_made(agent_repo, toy_task, verifier):
    """git's default strips one folder, and `toy/core.py` would become `core.py`, which is not there:
    such a patch applies only with -p0, and is listed and applied so."""
    core = agent_repo / CORE
    core.write_text(core.read_text().replace("if x > hi + 1:", "if x > hi:"))
    patch = staged_diff(agent_repo, "--no-prefix")
    assert "--- toy/core.py" in patch
    await resolved(verifier, toy_task, patch)
