"""`output.include_failures: true`: the dataset's `attempts` config holds every graded attempt,
passed or not, with its verdict, its filter decision and its conversation, credentials redacted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from datasets import load_dataset

from factory.output import BuildSettings, CardMeta, build_dataset, validate_card
from factory.output.hub import local_files
from factory.output.validate import read_metadata
from factory.records import Verdict
from tests.output.sample_run import (
    HF,
    PIPELINE_YAML,
    TASKS,
    attempt,
    demo_attempts,
    patch_for,
    run_folder,
    solve,
    trajectory,
)

ROOT = Path(__file__).parents[2]


def attempts_with_a_leaky_failure():
    """The sample run, plus a failed attempt whose tool output and verdict show a token."""
    leaky = trajectory("acme__widgets-3", "gpt", solve("z"), patch=patch_for("0"), outputs={0: f"HF_TOKEN={HF}"})
    failed = attempt("acme__widgets-3", "gpt", 5, leaky, resolved=False)
    failed.verdict = Verdict(resolved=False, reason="tests_failed", decided_by="tests", detail=f"env had {HF}",
                             tests={"tests/test_widgets.py::test_size_3": "failed", "tests/test_widgets.py::test_ok": "passed"})
    return [*demo_attempts(), failed]


def build(tmp_path, include_failures=True):
    return build_dataset(attempts_with_a_leaky_failure(), PIPELINE_YAML, tmp_path / "out",
                         BuildSettings(include_failures=include_failures), tasks=TASKS, meta=CardMeta(task_set="demo"))


def load(out: Path, config: str, tmp_path: Path):
    return load_dataset(str(out), config, split="train", cache_dir=str(tmp_path / "cache"))


def test_every_graded_attempt_is_a_row_with_its_verdict_and_filter_decision(tmp_path):
    summary = build(tmp_path)
    rows = {(r["instance_id"], r["teacher"], r["attempt"]): r for r in load(summary.out_dir, "attempts", tmp_path)}
    assert len(rows) == 10  # 11 attempts, one ended by infrastructure (SandboxStartError)
    assert ("acme__widgets-2", "claude", 1) not in rows
    assert sum(r["kept"] for r in rows.values()) == summary.rows == 4
    failed = rows[("acme__widgets-2", "claude", 0)]
    assert (failed["resolved"], failed["outcome"], failed["reason"]) == (False, "unresolved:tests_failed", "tests_failed")
    assert (failed["kept"], failed["dropped_by"], failed["drop_reason"]) == (False, "resolved", "not_resolved")
    loop = rows[("acme__widgets-2", "gpt", 0)]
    assert (loop["resolved"], loop["dropped_by"], loop["drop_reason"]) == (True, "loops", "repeated_action")
    cut = rows[("acme__widgets-3", "claude", 0)]
    assert (cut["exit"], cut["drop_reason"]) == ("max_turns", "not_submitted")
    kept = rows[("acme__widgets-1", "claude", 0)]
    assert kept["kept"] and kept["dropped_by"] is None and kept["outcome"] == "resolved"
    assert kept["harness"] == "factory" and kept["teacher"] == "claude" and kept["model"] == "claude-sonnet-4-5"
    assert kept["turns"] == 5 and kept["cost_usd"] == pytest.approx(0.05)
    assert kept["FAIL_TO_PASS"] == ["tests/test_widgets.py::test_size_1"]
    assert kept["messages"][2]["tool_calls"][0]["function"]["name"] == "bash"
    assert kept["tools"][0]["function"]["name"] == "bash"
    flagged = rows[("acme__widgets-2", "gpt", 1)]
    assert flagged["flags"] == ["secrets:secret_redacted"] and flagged["secrets_redacted"]


def test_failures_are_redacted_too(tmp_path):
    summary = build(tmp_path)
    rows = {(r["instance_id"], r["attempt"]): r for r in load(summary.out_dir, "attempts", tmp_path)}
    leaky = rows[("acme__widgets-3", 5)]
    assert leaky["secrets_redacted"] and leaky["dropped_by"] == "resolved"
    assert leaky["verdict_detail"] == "env had [REDACTED:hf_token]"
    assert {t["test"]: t["status"] for t in leaky["tests"]} == {
        "tests/test_widgets.py::test_size_3": "failed", "tests/test_widgets.py::test_ok": "passed"}
    for shard in (summary.out_dir / "attempts").glob("*.parquet"):
        assert HF not in str(pq.read_table(shard).to_pylist())


def test_the_card_lists_and_explains_the_attempts_config(tmp_path):
    summary = build(tmp_path)
    card = summary.card.read_text()
    configs = {c["config_name"]: c for c in read_metadata(card)["configs"]}
    assert configs["attempts"]["data_files"] == [{"split": "train", "path": "attempts/train-*.parquet"}]
    assert configs["messages"]["default"] is True and "default" not in configs["attempts"]
    assert "## Failures too: the `attempts` config" in card
    assert "10 graded attempts of the run, passed or not (4 of them are the rows above)" in card
    assert validate_card(summary.out_dir) == []  # more rows than messages, and that is right
    assert any(p.startswith("attempts/") for p in local_files(summary.out_dir))  # a push sends it


def test_without_include_failures_there_is_no_attempts_config(tmp_path):
    summary = build(tmp_path, include_failures=False)
    assert not (summary.out_dir / "attempts").exists()
    assert [c["config_name"] for c in read_metadata(summary.card.read_text())["configs"]] == ["messages"]
    assert "`attempts` config" not in summary.card.read_text()


def test_factory_build_writes_it_when_the_pipeline_says_so(tmp_path):
    store = run_folder(tmp_path, "output: {include_failures: true}\n")
    out = subprocess.run([sys.executable, "-m", "factory.cli", "build", str(store.folder)], capture_output=True,
                         text=True, cwd=ROOT, env={**os.environ})
    assert out.returncode == 0, out.stderr
    assert f"attempts: 9 rows in 1 file(s) under {store.dataset_dir / 'attempts'}" in out.stdout
    assert validate_card(store.dataset_dir) == []
