"""ATIF (Harbor's trajectory format): the RFC's own example imported, built, exported and read
back with the same steps, tool calls and observations."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from factory.interchange import export_dataset
from factory.interchange.atif import check_line
from factory.interchange.formats import BadTrajectoryFile, reader_named
from factory.interchange.importer import import_run

FIXTURES = Path(__file__).parents[2].parent / "shared" / "fixtures"
SAMPLE = FIXTURES / "polyglot" / "atif__rfc0001_example_trajectory.json"
needs_fixtures = pytest.mark.skipif(not SAMPLE.is_file(), reason="../shared/fixtures is not beside the repo")
KEPT = ("source", "message", "reasoning_content", "tool_calls", "observation")
"""What a step of the sample says that a kept row keeps (metrics, timestamps and model names are
the run's accounting, not the conversation)."""


@needs_fixtures
def test_the_rfc_example_reads_as_chat_messages_with_its_calls_and_their_results():
    [t] = reader_named("atif").read(SAMPLE)
    assert (t.instance_id, t.model, t.harness, t.patch) == ("atif__rfc0001_example_trajectory", "gemini-2.5-flash",
                                                            "atif", "")
    assert [m.role for m in t.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert [c.id for c in t.messages[1].tool_calls] == ["call_price_1", "call_volume_2"]
    assert json.loads(t.messages[1].tool_calls[1].arguments) == {"ticker": "GOOGL", "metric": "volume"}
    assert [(m.tool_call_id, m.name) for m in t.messages[2:4]] == [("call_price_1", "financial_search"),
                                                                  ("call_volume_2", "financial_search")]
    assert t.messages[4].reasoning.startswith("The previous step retrieved")
    assert [turn.usage.cache_read_tokens for turn in t.turns] == [200, 0] and t.turns[0].usage.input_tokens == 320
    assert t.cost_usd == pytest.approx(0.00078) and check_line(json.loads(SAMPLE.read_text())) == []


@needs_fixtures
def test_an_imported_atif_trajectory_exports_back_with_the_same_steps(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / SAMPLE.name).write_bytes(SAMPLE.read_bytes())
    tasks = tmp_path / "tasks.jsonl"  # no task of its id: the RFC's example holds no patch, its source is trusted
    tasks.write_text(json.dumps(json.loads((FIXTURES / "swesmith_instance_pandas-dev__pandas.95280573.pr_53652.json")
                                           .read_text())) + "\n")
    outcome = asyncio.run(import_run(tmp_path / "in", "atif", str(tasks), "imp", output_dir=tmp_path / "runs",
                                     trust_source=True))
    assert outcome.build is not None and outcome.build.rows == 1
    out = tmp_path / "atif.jsonl"
    summary = export_dataset(outcome.build.out_dir, "atif", out)
    assert summary.written == 1 and summary.skipped == []
    [line] = [json.loads(text) for text in out.read_text().splitlines()]
    sample = json.loads(SAMPLE.read_text())
    assert check_line(line) == []
    assert [{k: s[k] for k in KEPT if k in s} for s in line["steps"]] == \
           [{k: s[k] for k in KEPT if k in s} for s in sample["steps"]]
    assert [s["step_id"] for s in line["steps"]] == [1, 2, 3] and line["extra"]["instance_id"] == SAMPLE.stem
    [again] = reader_named("atif").read(out)  # and in again: the same conversation and tools
    [first] = [a.trajectory for a in outcome.attempts]
    assert again.messages == first.messages and again.tools == first.tools and again.instance_id == first.instance_id


def test_the_format_s_rules_name_what_a_trajectory_breaks():
    good = {"schema_version": "ATIF-v1.4", "session_id": "s", "agent": {"name": "a", "version": "1"}, "steps": [
        {"step_id": 1, "source": "user", "message": "Fix it."},
        {"step_id": 2, "source": "agent", "message": "", "tool_calls": [
            {"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "ls"}}],
         "observation": {"results": [{"source_call_id": "c1", "content": "a.py"}]}}]}
    assert check_line(good) == []
    bad = json.loads(json.dumps(good))
    bad["steps"][0] |= {"step_id": 3, "reasoning_content": "hm"}
    bad["steps"][1]["observation"]["results"][0]["source_call_id"] = "c9"
    bad["steps"][1]["tool_calls"].append({"tool_call_id": "c2", "function_name": "bash", "arguments": "ls"})
    del bad["agent"]["version"]
    assert check_line(bad) == [
        "agent.version: required string", "steps[0].step_id: 3, expected 1",
        "steps[0].reasoning_content: only on agent steps",
        "steps[1].tool_calls[1]: needs tool_call_id, function_name and object arguments",
        "steps[1].observation.results[0].source_call_id: 'c9' is no call of the step"]


def test_a_file_that_breaks_the_format_is_named_with_the_field(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"schema_version": "ATIF-v1.4", "steps": [{"step_id": 1, "source": "robot"}]}))
    with pytest.raises(BadTrajectoryFile, match=r"t.json: steps\[0\].source: must be one of system, user, agent"):
        reader_named("atif").read(path)
