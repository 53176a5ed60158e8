"""Real trajectories of each supported format, from several versions of the tools that wrote them
(samples/, where they came from in samples/SOURCES.md), imported with `factory import
--trust-source` and no task source, built, and exported in every format: every kept row goes
out, with each of its assistant turns and tool calls.

None of these files has a task that factory holds, so nothing here is verified by factory: a file
with a patch is recorded `not verified: no task source`, one without is taken as its source
verified it unless its source says otherwise (a crash, a Harbor reward of 0). Verifying imported
patches against their tasks is test_import.py's (Docker)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from factory.cli import app
from factory.interchange import atif, openai_chat, sharegpt
from factory.interchange.formats import files_of, reader_named
from factory.records import Exit
from tests.cli_runner import invoke

SAMPLES = Path(__file__).parent / "samples"
FORMATS = ("swe-agent", "mini-swe-agent", "atif", "openhands", "swe-smith-sft")
EXPORTS = {"openai": openai_chat.check_line, "sharegpt": sharegpt.check_line, "atif": atif.check_line}


def factory(*args: str) -> str:
    return invoke(app, *args)


def read_samples(fmt: str):
    reader = reader_named(fmt)
    return [t for f in files_of(SAMPLES / fmt, reader) for t in reader.read(f)]


def counts(messages: list[dict]) -> tuple[int, int]:
    """(assistant messages, tool calls) of a conversation in the chat layout."""
    said = [m for m in messages if m["role"] == "assistant"]
    return len(said), sum(len(m.get("tool_calls") or []) for m in said)


@pytest.fixture(scope="module", params=FORMATS)
def imported(request, tmp_path_factory):
    fmt = request.param
    where = tmp_path_factory.mktemp(fmt)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(where)
        out = factory("import", str(SAMPLES / fmt), "--format", fmt, "--run-id", "imp", "--trust-source")
        built = factory("build", "imp")
        for name in (*EXPORTS, "rollouts"):
            factory("export", "imp", "--format", name, "--out", str(where / f"{name}.jsonl"))
    return fmt, where, out, built


def test_every_sample_file_imports_without_a_task_source(imported):
    fmt, where, out, _ = imported
    trajectories = read_samples(fmt)
    lines = out.splitlines()
    assert not any(line.startswith("skipped") for line in lines), out
    with_patch = [t for t in trajectories if t.patch]
    trusted = [t for t in trajectories if not t.patch and not t.error and t.exit is Exit.submitted]
    assert f"imported {len(trajectories)} trajectories into {where / 'runs' / 'imp'}: 0 verified, 0 resolved; " \
           f"{len(trusted)} taken as their source verified them (--trust-source)" in lines
    assert sum("not verified: no task source (give --tasks)" in line for line in lines) == len(with_patch)
    assert trusted, "each format's samples hold runs their source verified"
    tasks = [json.loads(line) for line in (where / "runs" / "imp" / "tasks.jsonl").read_text().splitlines()]
    assert {t["instance_id"] for t in tasks} == {t.instance_id for t in trajectories}
    assert all(t["problem_statement"].strip() for t in tasks)  # from the file, or its first user message


def test_the_exports_keep_every_kept_row_with_its_turns_and_calls(imported):
    fmt, where, _, built = imported
    kept = [r for p in sorted((where / "runs" / "imp" / "dataset" / "messages").glob("*.parquet"))
            for r in pq.read_table(p).to_pylist()]
    assert kept and f"{len(kept)} rows" in built or f"({len(kept)} rows)" in built
    assert all(r["verified_by"] == "source" for r in kept)
    by_label = {f"{r['instance_id']}/{r['teacher']}/{r['attempt']}": r for r in kept}
    source = {(t.instance_id, t.teacher): t for t in read_samples(fmt)}
    for label, row in by_label.items():  # the import lost no turn of the file
        t = source[(row["instance_id"], row["teacher"])]
        assert counts(row["messages"]) == counts([m.to_openai() for m in t.messages]), label
    lines = {name: [json.loads(line) for line in (where / f"{name}.jsonl").read_text().splitlines()]
             for name in EXPORTS}
    for name, check in EXPORTS.items():
        assert len(lines[name]) == len(kept), name
        assert all(check(line) == [] for line in lines[name]), name
    for line in lines["openai"]:
        assert any(counts(line["messages"]) == counts(r["messages"]) for r in kept)
    for line in lines["atif"]:
        row = by_label[line["session_id"]]
        agent = [s for s in line["steps"] if s["source"] == "agent"]
        assert (len(agent), sum(len(s.get("tool_calls") or []) for s in agent)) == counts(row["messages"])
    for line in lines["sharegpt"]:
        row = by_label[line["id"]]
        calls = [sharegpt.calls_in(t["value"]) for t in line["conversations"] if t["from"] == "function_call"]
        assert sum(len(c) for c in calls) == counts(row["messages"])[1]
        model = "\n".join(t["value"] for t in line["conversations"] if t["from"] in ("gpt", "function_call"))
        assert all(m["content"].strip() in model for m in row["messages"] if m["role"] == "assistant")
    rollouts = (where / "rollouts.jsonl").read_text().splitlines()
    assert len(rollouts) == len(read_samples(fmt))  # every attempt, kept or not, is a rollout


def test_a_source_that_says_no_is_not_taken_on_trust(imported):
    fmt, _, out, _ = imported
    if fmt != "mini-swe-agent":
        pytest.skip("the crashed Harbor trial is among the mini-swe-agent samples")
    assert "015_m0r13n__pyais__step13__bytes2bits/bedrock/us.amazon.nova-premier-v1:0/0: not verified: its " \
           "source's verifier gave reward 0.0" in out


# ------------------------------------------------------------------ what each version writes


def test_swe_agent_0x_and_1x_files_give_their_model_task_and_calls():
    old, = reader_named("swe-agent").read(SAMPLES / "swe-agent" / "v0.4.0-klieret__swe-agent-test-repo-i1.traj")
    assert (old.model, old.exit, bool(old.patch), old.tools) == ("unknown", Exit.submitted, True, [])
    assert "```" in next(m.content for m in old.messages if m.role == "assistant")  # thought and action in text
    new, = reader_named("swe-agent").read(SAMPLES / "swe-agent" / "v1-6e44b9__sweagenttestrepo-1c2844.traj")
    assert (new.instance_id, new.model) == ("SWE-agent__test-repo-i1", "gpt-4o")  # replay_config is an object
    assert sum(len(m.tool_calls) for m in new.messages) == 4 and any(m.role == "tool" for m in new.messages)
    fc, = reader_named("swe-agent").read(SAMPLES / "swe-agent" / "v1-function-calling-marshmallow-code__marshmallow-1867.traj")
    assert fc.problem_statement.startswith("TimeDelta serialization precision")


def test_openhands_2024_pairs_read_as_the_model_s_turns():
    t, = reader_named("openhands").read(SAMPLES / "openhands" / "gorilla-codeact-v1.5-output.jsonl")
    assert (t.instance_id, t.model, t.exit) == ("1", "gpt-4o-2024-05-13", Exit.submitted)
    assert [m.role for m in t.messages] == ["user", "assistant", "user", "assistant"]
    assert t.messages[1].content.startswith("<<<domain>>> Video Classification")


def test_openhands_1x_sdk_events_read_as_calls_and_their_results():
    done, cut = reader_named("openhands").read(SAMPLES / "openhands" / "openagentsafety-sdk-v1-output.jsonl")
    assert (done.model, done.exit, cut.exit) == ("litellm_proxy/neulab/gpt-4o-2024-08-06", Exit.submitted, Exit.max_turns)
    assert done.messages[0].role == "user"  # the row's instruction: the history holds no user message
    calls = [c.id for m in done.messages for c in m.tool_calls]
    assert [m.tool_call_id for m in done.messages if m.role == "tool"] == calls and len(calls) == 9


def test_atif_1_6_images_are_named_and_terminus_calls_are_all_answered():
    t, = reader_named("atif").read(SAMPLES / "atif" / "computer-use-oncall-debug__kFdZhTa" / "agent" / "trajectory.json")
    assert t.instance_id == "computer-use-oncall-debug"  # the Harbor trial's task, not the file's name
    assert any(m.content.startswith("[image: images/") for m in t.messages if m.role == "tool")
    t, = reader_named("atif").read(SAMPLES / "atif" / "create-log-report-1__ppdUeFE" / "agent" / "trajectory.json")
    calls = [c.id for m in t.messages for c in m.tool_calls]
    assert [m.tool_call_id for m in t.messages if m.role == "tool"] == calls and len(calls) == 11


def test_swe_smith_dataset_rows_may_hold_their_messages_as_json_text(tmp_path):
    row = json.loads((SAMPLES / "swe-smith-sft" / "ft_xml_pandas.jsonl").read_text())
    released = tmp_path / "rows.jsonl"
    released.write_text(json.dumps({**row, "messages": json.dumps(row["messages"]), "model": "claude-3-7-sonnet",
                                    "resolved": False}) + "\n")
    t, = reader_named("swe-smith-sft").read(released)
    assert len(t.messages) == len(row["messages"]) and t.model == "claude-3-7-sonnet"
    assert t.error == "not verified: its source says it did not resolve its task (resolved: false)"
