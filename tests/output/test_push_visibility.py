"""`factory push` creates a private repo unless the pipeline (`output.private: false`) or
`--public` says otherwise; an existing repo keeps its visibility and the push says so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from factory.output import push
from factory.run.folder import RunStore
from tests.output.sample_run import run_folder

ROOT = Path(__file__).parents[2]


def factory_push(store: RunStore, *options: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_DISABLE_XET": "1"}
    return subprocess.run([sys.executable, "-m", "factory.cli", "push", str(store.folder), *options],
                          capture_output=True, text=True, cwd=ROOT, env=env)


@pytest.mark.parametrize(
    ("output", "options", "private"),
    [
        ("", [], True),  # output.private defaults to true
        ("", ["--public"], False),
        ("output: {private: false}\n", [], False),
        ("output: {private: false}\n", ["--private"], True),
        ("output: {private: true}\n", ["--public"], False),
    ],
)
def test_push_creates_the_repo_private_unless_told_otherwise(tmp_path, fake_hub, output, options, private):
    out = factory_push(run_folder(tmp_path, output), "--repo-id", "acme/widgets", *options)
    assert out.returncode == 0, out.stderr
    assert fake_hub.repo("acme/widgets").private is private
    assert "note:" not in out.stdout


def test_an_existing_repo_keeps_its_visibility_and_the_push_says_so(tmp_path, fake_hub):
    store = run_folder(tmp_path, "output: {hub_repo_id: acme/widgets}\n")
    assert factory_push(store, "--public").returncode == 0
    again = factory_push(store)  # private by default, but the repo exists and is public
    assert again.returncode == 0, again.stderr
    assert fake_hub.repo("acme/widgets").private is False
    assert "note: acme/widgets already existed and stays public" in again.stdout


def test_the_python_push_is_private_by_default(tmp_path, fake_hub):
    result = push(run_folder(tmp_path).dataset_dir, "acme/widgets")
    assert result.private is True and fake_hub.repo("acme/widgets").private is True
