"""The repo's warning filters and xfail_strict hold in the verification as under its own pytest
(factory/verify/frameworks/pytest_config.py): the trusted run is never more lenient than pytest."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from factory.records import Reason
from factory.verify.frameworks.pytest_config import RepoSettings, candidates, repo_settings
from tests.verify.conftest import BUG, git, task_with_start

CORE = "toy/core.py"
# a fix of clamp, and a parse_pair that now warns: tests/test_pairs.py (PASS_TO_PASS) sees the warning
WARNS = ("def parse_pair(text):\n",
         "def parse_pair(text):\n    import warnings\n    warnings.warn('parse_pair is deprecated', DeprecationWarning)\n")


def test_candidates_walk_from_the_tests_folder_up_to_the_repo():
    found = candidates(["tests/unit/test_a.py", "tests/unit/test_b.py"])
    assert found[:3] == ["tests/unit/pytest.toml", "tests/unit/.pytest.toml", "tests/unit/pytest.ini"]
    assert found.index("tests/unit/setup.cfg") < found.index("tests/pytest.toml") < found.index("pyproject.toml")
    assert found[-1] == "setup.cfg"
    assert candidates(["test_top.py", "tests/test_b.py"])[0] == "pytest.toml"


def test_the_first_file_pytest_would_take_is_the_one_read():
    files = {
        "tox.ini": b"[tox]\nenvlist = py3\n",  # no [pytest]: pytest passes it by
        "setup.cfg": b"[tool:pytest]\nfilterwarnings =\n    error\n    ignore::UserWarning\nxfail_strict = True\n",
        "pyproject.toml": b'[tool.pytest.ini_options]\nfilterwarnings = ["ignore"]\n',
    }
    order = ["tox.ini", "setup.cfg", "pyproject.toml"]
    assert repo_settings({p: files[p] for p in order}) == RepoSettings(["error", "ignore::UserWarning"], [], True)
    # an empty pytest.ini is a configuration: it wins, and says nothing
    assert repo_settings({"pytest.ini": b"", **files}) == RepoSettings()


def test_addopts_warning_options_and_a_disabled_warnings_plugin():
    toml = b'[tool.pytest.ini_options]\naddopts = "-ra -W error::DeprecationWarning -Wonce --pythonwarnings=default"\n'
    assert repo_settings({"pyproject.toml": toml}).warning_options == ["error::DeprecationWarning", "once", "default"]
    listed = b'[tool.pytest.ini_options]\naddopts = ["-W", "error"]\nfilterwarnings = ["error"]\nxfail_strict = true\n'
    assert repo_settings({"pyproject.toml": listed}) == RepoSettings(["error"], ["error"], True)
    off = b"[pytest]\naddopts = -p no:warnings -W error\nfilterwarnings = error\n"
    assert repo_settings({"pytest.ini": off}) == RepoSettings()


def test_the_trusted_ini_states_them():
    ini = RepoSettings(["error", "ignore:x y:UserWarning"], [], True).ini()
    assert ini == "[pytest]\nfilterwarnings =\n    error\n    ignore:x y:UserWarning\nxfail_strict = true\n"
    assert RepoSettings().ini() == "[pytest]\n"


def _patch(agent, *, warns: bool) -> str:
    text = (agent / CORE).read_text().replace(BUG[1], BUG[0])
    (agent / CORE).write_text(text.replace(*WARNS) if warns else text)
    return git(agent, "diff")


CONFIGS = {
    "pyproject filterwarnings": {"pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'},
    "tests/pytest.ini addopts -W": {"tests/pytest.ini": "[pytest]\naddopts = -q -W error::DeprecationWarning\n"},
}


@pytest.mark.docker
@pytest.mark.parametrize("config", CONFIGS.values(), ids=list(CONFIGS))
async def test_a_patch_that_warns_fails_where_the_repo_makes_warnings_errors(config, toy_task, tmp_path, verifier):
    task, agent = task_with_start(toy_task, tmp_path, config)
    patch = _patch(agent, warns=True)
    # the repo's own pytest on the agent's repo fails it too
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": str(agent)}
    plain = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_pairs.py"],
                           cwd=agent, capture_output=True, text=True, env=env)
    assert plain.returncode == 1 and "DeprecationWarning" in plain.stdout, plain.stdout
    verdict = await verifier.verify(task, patch)
    assert not verdict.resolved and verdict.reason == Reason.tests_failed, verdict
    assert "tests/test_pairs.py::test_parse_pair" in verdict.detail, verdict.detail


@pytest.mark.docker
async def test_a_fix_that_does_not_warn_is_resolved_under_the_repo_s_filters(toy_task, tmp_path, verifier):
    task, agent = task_with_start(toy_task, tmp_path, CONFIGS["pyproject filterwarnings"])
    verdict = await verifier.verify(task, _patch(agent, warns=False))
    assert verdict.resolved, verdict
