"""`factory export`: the kept rows as OpenAI chat fine-tuning JSONL and ShareGPT, each line
checked against its format's rules (OpenAI's also against the `openai` SDK's own types)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from pydantic import TypeAdapter

from factory.errors import NothingExported
from factory.interchange import export_dataset, openai_chat, read_kept, sharegpt
from factory.interchange.shape import RowShape, shape_rows
from factory.records import Message, ToolCall
from tests.output.sample_run import HF, TOOLS, attempt, run_folder, trajectory

ROOT = Path(__file__).parents[2]
SDK_MESSAGES = TypeAdapter(list[ChatCompletionMessageParam])
SDK_TOOLS = TypeAdapter(list[ChatCompletionToolParam])


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def store(tmp_path):
    return run_folder(tmp_path)


def test_openai_lines_hold_the_kept_rows_with_their_tools(store, tmp_path):
    summary = export_dataset(store.dataset_dir, "openai", tmp_path / "train.jsonl")
    kept = read_kept(store.dataset_dir)
    out = lines(tmp_path / "train.jsonl")
    assert summary.written == len(out) == len(kept) == 4 and summary.skipped == []
    for line, row in zip(out, kept, strict=True):
        assert openai_chat.check_line(line) == []
        SDK_MESSAGES.validate_python(line["messages"])
        SDK_TOOLS.validate_python(line["tools"])
        assert set(line) == {"messages", "tools"} and line["tools"] == TOOLS
        # a row ends with the turn it trains: the answer to `submit` is left out
        assert [m["role"] for m in line["messages"]] == [m.role for m in row.messages][:-1]
        calls = [c for m in line["messages"] for c in m.get("tool_calls", [])]
        assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
            (c.id, c.name, c.arguments) for m in row.messages for c in m.tool_calls]
        assert all("reasoning_content" not in m for m in line["messages"])  # the format has no field for it
    text = (tmp_path / "train.jsonl").read_text()
    assert HF not in text and "[REDACTED:" in text  # exported from the dataset, after the secrets filter


def test_sharegpt_lines_alternate_and_end_on_the_model(store, tmp_path):
    summary = export_dataset(store.dataset_dir, "sharegpt", tmp_path / "train.jsonl")
    out = lines(tmp_path / "train.jsonl")
    assert summary.written == len(out) == 4
    first = out[0]
    assert sharegpt.check_line(first) == [] and all(sharegpt.check_line(line) == [] for line in out)
    assert first["system"].startswith("You are a software engineer")
    assert json.loads(first["tools"]) == TOOLS
    tags = [t["from"] for t in first["conversations"]]
    assert tags[0] == "human" and tags[-1] == "function_call"  # the submit's result is left out
    assert tags[1:-1] == ["function_call", "observation"] * ((len(tags) - 2) // 2)
    call = first["conversations"][1]["value"]
    thought, _, body = call.partition("</think>\n\n")
    text, _, wrapped = body.partition("\n<tool_call>")
    assert (thought, text) == ("<think>\nthinking...\n", "Next I bash (0).")  # reasoning, then the turn's text
    assert json.loads(wrapped.removesuffix("</tool_call>")) == {"name": "bash", "arguments": {"command": "grep -rn size widgets/ # a"}}
    assert first["id"] == "acme__widgets-1/claude/0"


def test_parallel_calls_and_their_results_stay_together(tmp_path):
    calls = [ToolCall(id="a", name="bash", arguments='{"command": "ls"}'),
             ToolCall(id="b", name="bash", arguments='{"command": "pwd"}')]
    traj = trajectory("acme__widgets-1", "gpt", [("submit", {})], patch="x")
    traj.messages[2:2] = [Message(role="assistant", content="", tool_calls=calls),
                          Message(role="tool", tool_call_id="a", content="setup.py"),
                          Message(role="tool", tool_call_id="b", content="/testbed")]
    store = run_folder(tmp_path, attempts=[attempt("acme__widgets-1", "gpt", 0, traj)])
    [row] = shape_rows(read_kept(store.dataset_dir), RowShape.attempt)
    line = sharegpt.to_line(row)
    assert sharegpt.check_line(line) == []
    assert json.loads(line["conversations"][1]["value"]) == [
        {"name": "bash", "arguments": {"command": "ls"}}, {"name": "bash", "arguments": {"command": "pwd"}}]
    assert line["conversations"][2] == {"from": "observation", "value": "setup.py\n\n/testbed"}
    chat = openai_chat.to_line(row)
    assert openai_chat.check_line(chat) == [] and chat["messages"][2]["content"] is None


def _openai_line():
    return {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                         {"role": "assistant", "content": None, "tool_calls": [
                             {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": "out"},
                         {"role": "assistant", "content": "done"}],
            "tools": copy.deepcopy(TOOLS)}


def _set(path, value):
    def edit(line):
        *parents, last = path
        target = line
        for p in parents:
            target = target[p]
        target[last] = value
        return line
    return edit


@pytest.mark.parametrize(("edit", "problem"), [
    (_set(["metadata"], {}), "metadata: not a key of the format"),
    (_set(["messages", 4, "reasoning_content"], "x"), "messages[4].reasoning_content: not a key of a message"),
    (_set(["messages", 1, "role"], "human"), "messages[1].role: 'human' is not one of"),
    (_set(["messages", 4, "content"], ""), "messages[4].content: must be a non-empty string"),
    (_set(["messages", 2, "tool_calls", 0, "function", "arguments"], "{ls"), "must be a string holding a JSON object"),
    (_set(["messages", 2, "tool_calls", 0, "function", "arguments"], {"command": "ls"}), "must be a string holding"),
    (_set(["messages", 2, "tool_calls", 0, "function", "name"], "python"), "'python' is not one of the line's tools"),
    (_set(["messages", 3, "tool_call_id"], "c9"), "messages[3].tool_call_id: 'c9' answers no earlier tool call"),
    (lambda line: line["messages"].pop(3) and line, "messages[3]: comes before the tool results of c1"),
    (_set(["tools", 0, "function", "name"], "bad name"), "tools[0].function.name: 'bad name' is not 1-64"),
    (_set(["messages"], [{"role": "user", "content": "u"}]), "messages: no assistant message to train on"),
])
def test_the_openai_rules_catch_each_mistake(edit, problem):
    assert openai_chat.check_line(_openai_line()) == []
    problems = openai_chat.check_line(edit(_openai_line()))
    assert any(problem in p for p in problems), problems


def _sharegpt_line():
    return {"conversations": [{"from": "human", "value": "u"},
                              {"from": "function_call", "value": '{"name": "bash", "arguments": {"command": "ls"}}'},
                              {"from": "observation", "value": "out"}, {"from": "gpt", "value": "done"}],
            "system": "s", "tools": json.dumps(TOOLS), "id": "x/y/0"}


@pytest.mark.parametrize(("edit", "problem"), [
    (_set(["conversations", 1, "from"], "observation"), "conversations[1].from: 'observation' where the turns' alternation wants gpt or function_call"),
    (_set(["conversations", 0, "from"], "user"), "'user' is not one of"),
    (lambda line: line["conversations"].pop() and line, "must end with the model's turn"),
    (_set(["conversations", 1, "value"], "bash ls"), "a function_call must be JSON"),
    (_set(["conversations", 1, "value"], 'ls\n<tool_call>{"name": "bash", "arguments": {}}</tool_call> then'),
     "must wrap the calls, once and last"),
    (_set(["conversations", 1, "value"], '{"name": "bash", "arguments": {"command": "echo <tool_call>x</tool_call>"}}'),
     "must wrap the calls, once and last"),
    (_set(["conversations", 1, "value"], '{"name": "python", "arguments": {}}'), "a name among the tools"),
    (_set(["tools"], TOOLS), "tools: must be a string"),
    (_set(["messages"], []), "messages: not a key of the format"),
])
def test_the_sharegpt_rules_catch_each_mistake(edit, problem):
    assert sharegpt.check_line(_sharegpt_line()) == []
    problems = sharegpt.check_line(edit(_sharegpt_line()))
    assert any(problem in p for p in problems), problems


def test_a_row_that_cannot_alternate_is_skipped_with_its_reason(tmp_path):
    traj = trajectory("acme__widgets-1", "gpt", [("bash", {"command": "ls"}), ("submit", {})], patch="x")
    traj.messages.insert(4, Message(role="user", content="Please go on."))  # right after a tool result
    good = attempt("acme__widgets-2", "gpt", 0, trajectory("acme__widgets-2", "gpt", [("submit", {})], patch="y"))
    store = run_folder(tmp_path, attempts=[attempt("acme__widgets-1", "gpt", 0, traj), good])
    summary = export_dataset(store.dataset_dir, "sharegpt", tmp_path / "out.jsonl")
    assert summary.written == 1
    assert summary.skipped == [("acme__widgets-1/gpt/0", "message 3 (user) would break the turns' alternation")]
    assert export_dataset(store.dataset_dir, "openai", tmp_path / "chat.jsonl").written == 2


def factory(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "factory.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ})


def test_factory_export_writes_the_file_and_refuses_bad_input_in_one_line(store, tmp_path):
    out = factory("export", str(store.folder), "--format", "openai", "--out", str(tmp_path / "x" / "train.jsonl"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"4 row(s) written to {tmp_path / 'x' / 'train.jsonl'} (OpenAI chat fine-tuning JSONL)")
    assert len(lines(tmp_path / "x" / "train.jsonl")) == 4
    bad = factory("export", str(store.folder), "--format", "alpaca", "--out", str(tmp_path / "y.jsonl"))
    assert bad.returncode == 2
    assert bad.stderr.strip() == "factory: unknown export format 'alpaca'; valid: atif, dpo, openai, rollouts, sharegpt"
    (store.dataset_dir / "messages" / "train-00000-of-00001.parquet").unlink()
    unbuilt = factory("export", str(store.folder), "--format", "sharegpt", "--out", str(tmp_path / "z.jsonl"))
    assert unbuilt.returncode == 2 and unbuilt.stderr.count("\n") == 1
    assert "no messages/*.parquet; build the dataset first (factory build RUN)" in unbuilt.stderr


def test_an_export_that_refuses_every_row_writes_nothing_and_exits_1_with_one_line(tmp_path):
    """As imports did before they listed their harness's tools: every call names an unlisted tool."""
    trajs = [trajectory(f"acme__widgets-{k}", "gpt", [("bash", {"command": "ls"}), ("submit", {})], patch="x")
             for k in (1, 2)]
    for traj in trajs:
        traj.tools = []
    store = run_folder(tmp_path, attempts=[attempt(t.instance_id, "gpt", 0, t) for t in trajs])
    out = tmp_path / "train.jsonl"
    with pytest.raises(NothingExported) as info:
        export_dataset(store.dataset_dir, "openai", out)
    assert not out.exists()
    assert str(info.value) == (
        f"none of the 2 row(s) fit OpenAI chat fine-tuning JSONL, nothing written to {out}: acme__widgets-1/gpt/0: "
        "messages[2].tool_calls[0].function.name: 'bash' is not one of the line's tools; "
        "messages[4].tool_calls[0].function.name: 'submit' is not one of the line's tools (and 1 more row(s) refused)")
    cli = factory("export", str(store.folder), "--format", "openai", "--out", str(out))
    assert cli.returncode == 1 and not out.exists()
    assert cli.stderr == f"factory: {info.value}\n" and cli.stdout == ""
