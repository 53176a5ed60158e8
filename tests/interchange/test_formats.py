"""Other agents' trajectory files, read against the real public samples in ../shared/fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factory.errors import UsageError
from factory.interchange import tools as harness_tools
from factory.interchange.formats import READERS, files_of, reader_named
from factory.interchange.importer import read_files
from factory.records import Exit
from tests.interchange import minisweagent_files as msa

FIXTURES = Path(__file__).parents[2].parent / "shared" / "fixtures"
needs_fixtures = pytest.mark.skipif(not FIXTURES.is_dir(), reason="../shared/fixtures is not beside the repo")


@needs_fixtures
def test_mini_swe_agent_s_older_message_list_imports_without_a_patch():
    [t] = READERS.get("mini-swe-agent").read(FIXTURES / "minisweagent_github_issue.traj.json")
    assert t.instance_id == "minisweagent_github_issue" and t.harness == "mini-swe-agent"
    assert len(t.messages) == 22 and [m.role for m in t.messages[:3]] == ["system", "user", "assistant"]
    assert "```mswea_bash_command" in t.messages[2].content and t.tools == []  # its scaffold, as it was
    assert t.exit is Exit.submitted and t.patch == ""
    assert t.error is None  # no patch is the importer's to judge: unverified, or trusted with --trust-source


def test_mini_swe_agent_2x_files_give_patch_model_cost_and_exit(tmp_path):
    patch = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    path = msa.write(tmp_path, "acme__x-1", msa.trajectory("acme__x-1", "Fix x.", patch, cost=0.25))
    [t] = READERS.get("mini-swe-agent").read(path)
    assert (t.instance_id, t.model, t.teacher, t.patch, t.exit) == (
        "acme__x-1", "anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5-20250929", patch, Exit.submitted)
    assert t.cost_usd == 0.25 and t.error is None
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "user", "assistant", "user"]  # `exit` left out
    limited = msa.trajectory("acme__x-2", "Fix x.", "", exit_status="LimitsExceeded")
    del limited["instance_id"]  # older 2.x files: the id is the file's name
    [t] = READERS.get("mini-swe-agent").read(msa.write(tmp_path, "acme__x-2", limited))
    assert (t.instance_id, t.exit) == ("acme__x-2", Exit.max_turns)


def test_files_that_mini_swe_agent_2_4_6_wrote_import_with_their_submission():
    path = next((Path(__file__).parent / "data" / "minisweagent-2.4.6").rglob("*caret-zero-minor.traj.json"))
    raw = json.loads(path.read_text())
    assert raw["trajectory_format"] == "mini-swe-agent-1.1" and raw["info"]["mini_version"] == "2.4.6"
    [t] = READERS.get("mini-swe-agent").read(path)
    assert t.instance_id == raw["instance_id"] == "factory-demo__semverkit.caret-zero-minor"
    assert t.patch == raw["info"]["submission"] and t.patch.startswith("diff --git a/semverkit/ranges.py")
    assert (t.model, t.exit, t.cost_usd, t.error) == ("deterministic", Exit.submitted, pytest.approx(0.04), None)
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "user", "assistant", "user", "assistant"]


@needs_fixtures
def test_a_real_swe_agent_trajectory_keeps_its_function_calls_and_patch():
    [t] = READERS.get("swe-agent").read(FIXTURES / "swesmith_sweagent_pydantic__pydantic.acb0f10f.pr_8316.traj")
    raw = json.loads((FIXTURES / "swesmith_sweagent_pydantic__pydantic.acb0f10f.pr_8316.traj").read_text())
    assert t.instance_id == "pydantic__pydantic.acb0f10f.pr_8316" and t.model == "claude-3-7-sonnet-20250219"
    assert t.patch == raw["info"]["submission"] and t.patch.startswith("diff --git")
    assert t.exit is Exit.submitted and t.cost_usd == pytest.approx(0.3017616) and t.harness == "swe-agent"
    assert len(t.messages) == 46
    first = t.messages[2]
    assert first.role == "assistant" and first.tool_calls[0].name == "bash"
    assert json.loads(first.tool_calls[0].arguments)["command"].startswith("find /testbed")
    assert t.messages[3].role == "tool" and t.messages[3].tool_call_id == first.tool_calls[0].id
    assert {c.name for m in t.messages for c in m.tool_calls} >= {"bash", "str_replace_editor", "submit"}


@needs_fixtures
def test_swe_smith_s_sft_rows_import_each_line_without_a_patch():
    rows = READERS.get("swe-smith-sft").read(FIXTURES / "swesmith_ft_xml_example.jsonl")
    assert len(rows) == 3 and rows[0].instance_id == "pandas-dev__pandas.95280573.pr_53652"
    assert "<function=bash>" in rows[0].messages[2].content  # the XML tool-call style stays as it was
    assert all(r.patch == "" and r.error is None for r in rows)


@needs_fixtures
def test_openhands_output_rows_become_the_model_s_own_messages_and_the_tool_results():
    runs = READERS.get("openhands").read(FIXTURES / "openhands_multi_swe_bench_output.jsonl")
    raw = [json.loads(line) for line in (FIXTURES / "openhands_multi_swe_bench_output.jsonl").read_text().splitlines()]
    assert [r.instance_id for r in runs] == ["ponylang__ponyc-4595", "ponylang__ponyc-4593", "ponylang__ponyc-4588"]
    assert [r.exit for r in runs] == [Exit.submitted, Exit.submitted, Exit.max_turns]  # the third hit its iteration cap
    first = runs[0]
    assert first.patch == raw[0]["test_result"]["git_patch"] and first.model == "openai/openrouter-llama-4-maverick"
    assert first.harness == "openhands" and [m.role for m in first.messages[:4]] == ["system", "user", "assistant", "tool"]
    call = first.messages[2].tool_calls[0]
    assert (call.id, call.name, json.loads(call.arguments)) == (
        "toolu_01", "execute_bash", {"command": "ls -l /workspace/ponylang__ponyc__0.1"})
    assert first.messages[3].tool_call_id == "toolu_01" and first.messages[3].content.startswith("total 300")
    calls = {c.id for m in first.messages for c in m.tool_calls}
    assert {m.tool_call_id for m in first.messages if m.role == "tool"} <= calls  # every result answers a call
    assert {c.name for m in first.messages for c in m.tool_calls} >= {"execute_bash", "finish"}


def test_a_bad_file_is_named_and_skipped_and_the_rest_imports(tmp_path):
    good = msa.write(tmp_path, "acme__x-1", msa.trajectory("acme__x-1", "Fix x.", "diff"))
    (tmp_path / "broken.traj.json").write_text("{not json")
    (tmp_path / "other.traj.json").write_text(json.dumps({"info": {}, "messages": [{"content": "no role"}]}))
    (tmp_path / "notes.txt").write_text("not a trajectory")  # not a file of the format: not read at all
    read, bad = read_files(tmp_path, "mini-swe-agent")
    assert [(f, t.instance_id) for f, t in read] == [(good, "acme__x-1")]
    assert bad == [(tmp_path / "broken.traj.json", "file: not JSON (line 1: Expecting property name enclosed in double quotes)"),
                   (tmp_path / "other.traj.json", "messages[0]: must be an object with a role")]


def test_unknown_formats_and_empty_folders_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match=r"^unknown trajectory format 'aider'; valid: atif, mini-swe-agent, openhands, swe-agent, swe-smith-sft$"):
        reader_named("aider")
    with pytest.raises(UsageError, match=r"no \*\.traj files for --format swe-agent"):
        files_of(tmp_path, READERS.get("swe-agent"))
    with pytest.raises(UsageError, match="no such file or folder"):
        files_of(tmp_path / "missing", READERS.get("swe-agent"))


@needs_fixtures
@pytest.mark.parametrize(("fmt", "sample", "runs"), [
    ("mini-swe-agent", "minisweagent_github_issue.traj.json", 1),
    ("swe-agent", "swesmith_sweagent_pydantic__pydantic.acb0f10f.pr_8316.traj", 1),
    ("swe-smith-sft", "swesmith_ft_xml_example.jsonl", 3),
    ("openhands", "openhands_multi_swe_bench_output.jsonl", 3),
])
def test_every_format_in_the_shared_samples_imports_as_a_run(tmp_path, fmt, sample, runs):
    """Their tasks are not here (or their files hold no patch), so each trajectory is recorded
    unverified with the reason, and the run is built all the same."""
    import asyncio

    from factory.interchange.importer import import_run
    from factory.output import validate_card

    tasks = tmp_path / "tasks.jsonl"  # the SWE-smith sample's one task (its SFT rows are of it)
    tasks.write_text(json.dumps(json.loads((FIXTURES / "swesmith_instance_pandas-dev__pandas.95280573.pr_53652.json")
                                           .read_text())) + "\n")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / sample).write_bytes((FIXTURES / sample).read_bytes())
    outcome = asyncio.run(import_run(tmp_path / "in", fmt, str(tasks), "imp", output_dir=tmp_path / "runs"))
    assert len(outcome.attempts) == runs and outcome.bad_files == []
    assert all(a.verdict is None and a.trajectory.error.startswith("not verifi") for a in outcome.attempts)
    assert all(a.trajectory.harness == fmt for a in outcome.attempts)
    assert len(list((tmp_path / "runs" / "imp" / "attempts").rglob("*.json"))) == runs
    assert outcome.build is not None and outcome.build.rows == 0 and validate_card(outcome.build.out_dir) == []


TOOLCALL = Path(__file__).parent / "data" / "minisweagent-2.4.6-toolcall"


def _called(t) -> set[str]:
    return {c.name for m in t.messages for c in m.tool_calls}


def test_mini_swe_agent_s_tool_calling_runs_list_its_bash_tool():
    """Files its tool-calling models wrote hold calls of `bash` but no schema of it."""
    for path in sorted((TOOLCALL / "chat").rglob("*.traj.json")):
        assert "tools" not in json.loads(path.read_text())
        [t] = READERS.get("mini-swe-agent").read(path)
        assert t.tools == [harness_tools.MINI_SWE_AGENT_BASH] and _called(t) == {"bash"}
        assert [m.role for m in t.messages] == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    text = next((Path(__file__).parent / "data" / "minisweagent-2.4.6").rglob("*.traj.json"))
    assert READERS.get("mini-swe-agent").read(text)[0].tools == []  # its text-format models are given no tool


def test_mini_swe_agent_s_responses_api_runs_read_as_chat_messages():
    path = next((TOOLCALL / "responses").rglob("*.traj.json"))
    raw = json.loads(path.read_text())
    assert raw["messages"][2]["object"] == "response" and raw["messages"][3]["type"] == "function_call_output"
    [t] = READERS.get("mini-swe-agent").read(path)
    assert t.model == "deterministic_response_api" and t.patch == raw["info"]["submission"] and t.exit is Exit.submitted
    assert t.tools == [harness_tools.MINI_SWE_AGENT_BASH]
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert t.messages[0].content.startswith("You are a helpful assistant")  # its input_text parts
    assert [m.content for m in t.messages if m.role == "assistant"] == [
        "THOUGHT: Let me look at the repository.", "THOUGHT: I will change the code.", "THOUGHT: Done; submitting."]
    calls = [c for m in t.messages for c in m.tool_calls]
    assert [c.id for c in calls] == ["call_0", "call_1", "call_2"] and json.loads(calls[0].arguments) == {"command": "ls"}
    assert [m.tool_call_id for m in t.messages if m.role == "tool"] == ["call_0", "call_1"]
    assert t.messages[3].content.startswith("<returncode>0</returncode>")


@needs_fixtures
def test_swe_agent_1x_runs_list_the_tools_of_their_bundles():
    path = FIXTURES / "swesmith_sweagent_pydantic__pydantic.acb0f10f.pr_8316.traj"
    [t] = READERS.get("swe-agent").read(path)
    assert [harness_tools.name_of(tool) for tool in t.tools] == ["bash", "str_replace_editor", "submit"]
    editor = t.tools[1]["function"]["parameters"]
    assert editor["required"] == ["command", "path"] and editor["properties"]["view_range"]["items"] == {"type": "integer"}
    assert _called(t) <= {harness_tools.name_of(tool) for tool in t.tools}
    assert all(tool["function"]["description"] != harness_tools.INFERRED for tool in t.tools)


@needs_fixtures
def test_a_harness_version_without_known_schemas_gets_them_inferred_from_its_calls(tmp_path):
    raw = json.loads((FIXTURES / "swesmith_sweagent_pydantic__pydantic.acb0f10f.pr_8316.traj").read_text())
    raw["info"]["swe_agent_version"] = "0.7.0"  # a version whose tools the table does not know
    (tmp_path / "x.traj").write_text(json.dumps(raw))
    [t] = READERS.get("swe-agent").read(tmp_path / "x.traj")
    assert {harness_tools.name_of(tool) for tool in t.tools} == _called(t) == {"bash", "str_replace_editor", "submit"}
    by_name = {harness_tools.name_of(tool): tool["function"] for tool in t.tools}
    assert by_name["bash"]["description"] == harness_tools.INFERRED
    assert by_name["bash"]["parameters"] == {"type": "object", "properties": {"command": {"type": "string"}},
                                             "required": ["command"]}
    editor = by_name["str_replace_editor"]["parameters"]
    assert editor["required"] == ["command", "path"]  # in every call; the others in some
    assert editor["properties"]["old_str"] == {"type": "string"} and by_name["submit"]["parameters"]["properties"] == {}


@needs_fixtures
def test_openhands_runs_list_the_tools_of_their_system_event():
    raw = json.loads((FIXTURES / "openhands_multi_swe_bench_output.jsonl").read_text().splitlines()[0])
    first = READERS.get("openhands").read(FIXTURES / "openhands_multi_swe_bench_output.jsonl")[0]
    assert first.tools == raw["history"][0]["args"]["tools"]
    assert _called(first) <= {harness_tools.name_of(tool) for tool in first.tools}


@needs_fixtures
@pytest.mark.parametrize(("fmt", "sample", "runs"), [
    ("swe-smith-sft", "swesmith_ft_xml_example.jsonl", 3),
    ("mini-swe-agent", "minisweagent_github_issue.traj.json", 1),
])
def test_rows_without_a_patch_are_kept_as_their_source_verified_them_with_trust_source(tmp_path, fmt, sample, runs):
    """SWE-smith released only rows that solved their task, and hold no patch: with --trust-source
    they are kept, and the rows, the warehouse and the card say that factory did not verify them."""
    import asyncio

    import pyarrow.parquet as pq

    from factory.interchange.importer import import_run
    from factory.output import validate_card
    from factory.warehouse.read import run_query

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(json.loads((FIXTURES / "swesmith_instance_pandas-dev__pandas.95280573.pr_53652.json")
                                           .read_text())) + "\n")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / sample).write_bytes((FIXTURES / sample).read_bytes())
    outcome = asyncio.run(import_run(tmp_path / "in", fmt, str(tasks), "imp", output_dir=tmp_path / "runs",
                                     trust_source=True))
    assert all(a.verdict is not None and a.verdict.verified_by == "source" for a in outcome.attempts)
    assert f"imported {runs} trajectories into {outcome.run_folder}: 0 verified, 0 resolved; {runs} taken as their " \
           "source verified them (--trust-source)" in outcome.format_lines()
    build = outcome.build
    assert build is not None and build.rows >= 1 and "resolved" not in {d.filter for d in build.drops}
    rows = pq.read_table(build.out_dir / "messages").to_pylist()  # the filters after `resolved` still judge them
    assert len(rows) == build.rows and {r["verified_by"] for r in rows} == {"source"}
    found = run_query(outcome.run_folder / "warehouse.duckdb",
                      "SELECT verified_by, count(*), count(*) FILTER (WHERE kept) FROM v_attempts GROUP BY ALL").rows
    assert found == [("source", runs, build.rows)]
    card = (build.out_dir / "README.md").read_text()
    assert f"**Rows verified by their source, not by factory.** {build.rows} of the {build.rows} rows" in card
    assert f"- Verified: 0 row(s) by factory's verifier, {build.rows} by their source alone" in card
    assert "mixes them" not in card and validate_card(build.out_dir) == []
    untrusted = asyncio.run(import_run(tmp_path / "in", fmt, str(tasks), "plain", output_dir=tmp_path / "runs"))
    assert untrusted.build is not None and untrusted.build.rows == 0  # without the flag nothing is taken on trust
    assert all("--trust-source" in (a.trajectory.error or "") for a in untrusted.attempts)


def test_a_build_that_mixes_source_verified_and_factory_verified_rows_says_so(tmp_path):
    from factory.interchange.importer import TRUSTED
    from factory.output import build_dataset
    from factory.records import Attempt, AttemptKey, Message, Trajectory, Verdict

    def kept(instance: str, verdict: Verdict) -> Attempt:
        messages = [Message(role="system", content="You fix bugs."), Message(role="user", content=f"Fix {instance}."),
                    Message(role="assistant", content=f"Fixed {instance}.")]
        return Attempt(key=AttemptKey(run_id="r", instance_id=instance, teacher="t", index=0), verdict=verdict,
                       trajectory=Trajectory(instance_id=instance, teacher="t", model="m", messages=messages,
                                             patch="" if verdict.verified_by == "source" else "+x\n",
                                             exit=Exit.submitted))

    build_dataset([kept("acme__a-1", TRUSTED.model_copy()), kept("acme__b-1", Verdict(resolved=True))],
                  "name: mixed\n", tmp_path / "out")
    card = (tmp_path / "out" / "README.md").read_text()
    assert "1 of the 2 rows were imported with `factory import --trust-source`" in card
    assert 'The dataset mixes them with 1 row(s) that factory verified itself (`verified_by: "factory"`)' in card
    assert "- Verified: 1 row(s) by factory's verifier, 1 by their source alone" in card
