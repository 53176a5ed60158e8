"""`factory export --format sharegpt` read by LLaMA-Factory itself: the `dataset_info.json` entry and
the `FILE.llamafactory.yaml` arguments the export writes, run through LLaMA-Factory's sharegpt
converter and its `get_dataset` with the Qwen3 template and Qwen3's real tokenizer.

LLaMA-Factory pins datasets, transformers and trl below factory's, so it lives in a venv of its own
(`make llamafactory`) and `llamafactory_load.py` runs there on the exported folder. LLaMA-Factory
drops a line whose roles do not alternate with no more than a log warning, so every check counts:
as many lines converted and encoded as were written.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from factory.interchange import export_dataset, read_kept, sharegpt
from factory.interchange.export import ExportOptions
from factory.interchange.shape import RowShape
from factory.interchange.trainers import sidecars
from factory.records import Message, ToolCall
from factory.render import build_renderer
from factory.render.vocab import qwen3_tokenizer_path
from tests.output.sample_run import attempt, demo_attempts, patch_for, run_folder, trajectory

LF_PYTHON = Path(__file__).parents[2] / ".venv-llamafactory" / "bin" / "python"
LOAD = Path(__file__).with_name("llamafactory_load.py")
ROLE = {sharegpt.HUMAN: "user", sharegpt.GPT: "assistant", sharegpt.CALL: "function",
        sharegpt.OBSERVATION: "observation"}
SHAPES = {"attempts": RowShape.attempt, "steps": RowShape.step, "last": RowShape.last}

pytestmark = pytest.mark.skipif(not LF_PYTHON.exists(), reason="no LLaMA-Factory venv: `make llamafactory` makes it")


def parallel_attempt():
    """Two calls in one turn, their two results, and a closing turn of plain text."""
    instance = "acme__widgets-3"
    traj = trajectory(instance, "gpt", [], patch=patch_for("10"))
    view = {"command": "view", "path": "/testbed/widgets/size.py"}
    traj.messages += [
        Message(role="assistant", content="", tool_calls=[
            ToolCall(id="a", name="bash", arguments=json.dumps({"command": "ls widgets"})),
            ToolCall(id="b", name="str_replace_editor", arguments=json.dumps(view))]),
        Message(role="tool", tool_call_id="a", name="bash", content="size.py"),
        Message(role="tool", tool_call_id="b", name="str_replace_editor", content="def size():\n    return 0"),
        Message(role="assistant", content="size() returns 0; it should return 10.", reasoning="the fix is one line"),
    ]
    return attempt(instance, "gpt", 0, traj)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def broken_lines(good: dict) -> list[dict]:
    """Two ways out of the layout, each a line LLaMA-Factory drops."""
    turns = good["conversations"]
    return [{**good, "conversations": turns[:3]},  # ends on a tool result
            {**good, "conversations": [turns[0], *turns]}]  # two human turns in a row


def load_in_llamafactory(folder: Path, *names: str) -> dict:
    report = folder / "llamafactory-report.json"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DISABLE_VERSION_CHECK")}
    env |= {"HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(folder / ".cache"), "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
            "TRANSFORMERS_VERBOSITY": "error", "LLAMAFACTORY_VERBOSITY": "WARN"}  # its warnings name the lines it drops
    done = subprocess.run([str(LF_PYTHON), str(LOAD), str(report), str(qwen3_tokenizer_path().parent), "qwen3", *names],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(report.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Each row shape exported into one folder from a run with a parallel call, `mixed.jsonl` (a good
    line and two broken ones) written beside them, and LLaMA-Factory's reading of each."""
    run = tmp_path_factory.mktemp("run")
    store = run_folder(run, attempts=[*demo_attempts(), parallel_attempt()])
    folder = run / "export"
    for name, shape in SHAPES.items():
        export_dataset(store.dataset_dir, "sharegpt", folder / f"{name}.jsonl", ExportOptions(rows=shape),
                       attempts=store.attempts)
    good = lines(folder / "attempts.jsonl")[0]
    mixed = folder / "mixed.jsonl"
    mixed.write_text("".join(json.dumps(line) + "\n" for line in [good, *broken_lines(good)]), encoding="utf-8")
    for path, text in sidecars(mixed, "sharegpt", every_turn=True, command="test").items():
        path.write_text(text, encoding="utf-8")
    return folder, read_kept(store.dataset_dir), load_in_llamafactory(folder, *SHAPES, "mixed")


def model_turns(line: dict) -> list[dict]:
    return [t for t in line["conversations"] if ROLE[t["from"]] in ("assistant", "function")]


def rendered(turn: dict) -> list[str]:
    """What of a model turn must reach its trained tokens: its thought, its text, then each of its
    calls as the Qwen template writes them."""
    thought, _, rest = turn["value"].rpartition("</think>")
    parts = [thought + "</think>"] if thought else []
    if turn["from"] == sharegpt.GPT:
        return [*parts, rest.strip()]
    text, wrapped, calls = rest.partition("<tool_call>")
    calls = json.loads(calls.removesuffix("</tool_call>") if wrapped else rest)
    parts += [text.strip()] if wrapped else []
    return parts + [f"<tool_call>\n{json.dumps(c, ensure_ascii=False)}\n</tool_call>"
                    for c in (calls if isinstance(calls, list) else [calls])]


@pytest.mark.parametrize("name", SHAPES)
def test_every_line_converts_with_its_roles_system_and_tools(exported, name):
    folder, _, loaded = exported
    written = lines(folder / f"{name}.jsonl")
    report = loaded[name]
    assert report["lines"] == len(written)
    assert len(report["converted"]) == len(report["encoded"]) == len(written)  # no line dropped
    for line, converted, encoded in zip(written, report["converted"], report["encoded"], strict=True):
        assert converted["roles"] == [ROLE[t["from"]] for t in line["conversations"]]
        assert converted["response"] == [line["conversations"][-1]["value"]]
        assert converted["system"] == line["system"] != "" and converted["tools"] == line["tools"]
        assert encoded["text"].startswith(f"<|im_start|>system\n{line['system']}\n\n# Tools")
        for tool in json.loads(line["tools"]):
            assert json.dumps(tool, ensure_ascii=False) in encoded["text"]


@pytest.mark.parametrize("name", SHAPES)
def test_the_trained_tokens_are_the_rows_trained_turns(exported, name):
    folder, _, loaded = exported
    for line, encoded in zip(lines(folder / f"{name}.jsonl"), loaded[name]["encoded"], strict=True):
        turns = model_turns(line) if name == "attempts" else model_turns(line)[-1:]  # mask_history: the last
        assert len(encoded["trained"]) == len(turns)
        for span, turn in zip(encoded["trained"], turns, strict=True):
            assert span.endswith("<|im_end|>\n") and all(part in span for part in rendered(turn))


def test_parallel_calls_and_their_results_land_as_one_function_turn_and_one_observation(exported):
    folder, _, loaded = exported
    [(line, converted, encoded)] = [
        (line, converted, encoded) for line, converted, encoded in
        zip(lines(folder / "attempts.jsonl"), loaded["attempts"]["converted"], loaded["attempts"]["encoded"], strict=True)
        if line["id"] == "acme__widgets-3/gpt/0"]
    assert converted["roles"] == ["user", "function", "observation", "assistant"]
    first, last = encoded["trained"]
    assert first.count("<tool_call>") == 2 and '"name": "bash"' in first and '"name": "str_replace_editor"' in first
    assert "<tool_response>\nsize.py\n\ndef size():\n    return 0\n</tool_response>" in encoded["text"]
    assert last == "<think>\nthe fix is one line\n</think>\n\nsize() returns 0; it should return 10.<|im_end|>\n"


def test_a_line_the_layout_check_refuses_is_one_llamafactory_drops(exported):
    """The counting above can fail: lines `sharegpt.check_line` refuses are the ones LLaMA-Factory
    drops with no more than a warning."""
    folder, _, loaded = exported
    good, *broken = lines(folder / "mixed.jsonl")
    assert sharegpt.check_line(good) == [] and all(sharegpt.check_line(line) for line in broken)
    report = loaded["mixed"]
    assert report["lines"] == 3 and len(report["encoded"]) == 1
    assert [bool(c["roles"]) for c in report["converted"]] == [True, False, False]


def test_where_the_two_templates_agree_the_encoded_text_is_the_kept_row_rendered_by_qwen3s_own(exported):
    """LLaMA-Factory's qwen3 template and Qwen3's chat template agree on turns that carry reasoning
    and one call each (they part on turns without reasoning, where LLaMA-Factory adds an empty
    `<think>` block, and on several tool results, which the export joins into one observation). On
    those rows the export must cost no token: LLaMA-Factory encodes what the model sees at inference."""
    folder, kept, loaded = exported
    rows = {f"{row.instance_id}/{row.teacher}/{row.attempt}": row for row in kept}
    renderer = build_renderer(template="qwen3")
    compared = 0
    for line, encoded in zip(lines(folder / "attempts.jsonl"), loaded["attempts"]["encoded"], strict=True):
        row = rows[line["id"]]
        model = [i for i, m in enumerate(row.messages) if m.role == "assistant"]
        if all(row.messages[i].reasoning and len(row.messages[i].tool_calls) == 1 for i in model):
            assert encoded["text"] == renderer.render(row.messages[:model[-1] + 1], row.tools).text
            compared += 1
    assert compared  # the claude rows
