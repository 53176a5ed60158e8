"""`factory render`: a trajectory file in, the render with trained spans marked out."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from factory.records import Attempt, AttemptKey, Exit, Trajectory
from factory.render.cli import render
from tests.render.render_cases import CASES, asst, user

app = typer.Typer()
app.command()(render)
runner = CliRunner()


def _write(path: Path, case: str = "tools", scripted: bool = False) -> Path:
    messages, tools = CASES[case]
    traj = Trajectory(instance_id="demo__1", teacher="scripted", model="m", messages=messages, tools=tools,
                      exit=Exit.submitted, scripted=scripted)
    path.write_text(traj.model_dump_json(), encoding="utf-8")
    return path


def test_prints_the_render_with_trained_spans_marked(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.json", scripted=True)
    result = runner.invoke(app, [str(path), "--no-color"])
    assert result.exit_code == 0, result.output
    assert "⟦<think>\nStart with the tests.\n</think>\n\nLet me run the tests." in result.output
    assert "<|im_start|>user\n<tool_response>\n1 failed, 3 passed" in result.output
    assert "[scripted teacher]" in result.output and "template=qwen3" in result.output
    assert "tokens," in result.output and "trained" in result.output


def test_thinking_option_changes_the_render(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.json")
    result = runner.invoke(app, [str(path), "--thinking", "none", "--no-color"])
    assert result.exit_code == 0 and "<think>" not in result.output


def test_run_folder_and_attempt(tmp_path: Path) -> None:
    messages, tools = CASES["two_queries"]
    traj = Trajectory(instance_id="x", teacher="t", model="m", messages=messages, tools=tools, exit=Exit.submitted)
    attempt = Attempt(key=AttemptKey(run_id="r", instance_id="x", teacher="t", index=0), trajectory=traj)
    (tmp_path / "attempts").mkdir()
    (tmp_path / "attempts" / "x-0.json").write_text(attempt.model_dump_json(), encoding="utf-8")
    result = runner.invoke(app, [str(tmp_path), "x-0", "--no-color", "--template", "chatml"])
    assert result.exit_code == 0, result.output
    assert "⟦4<|im_end|>⟧" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.json"], "not a trajectory file or a run folder"),
        (["{tmp}/bad.json"], "not a trajectory"),
        (["{tmp}/t.json", "--template", "llama"], "unknown render template 'llama'"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    _write(tmp_path / "t.json")
    (tmp_path / "bad.json").write_text('{"instance_id": 3}', encoding="utf-8")
    result = runner.invoke(app, [a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == 2
    assert message in result.output


def test_unrenderable_trajectory_exits_1(tmp_path: Path) -> None:
    traj = Trajectory(instance_id="x", teacher="t", model="m", exit=Exit.submitted,
                      messages=[user("a"), asst("\n\nb"), user("c"), asst("d")])
    path = tmp_path / "t.json"
    path.write_text(traj.model_dump_json(), encoding="utf-8")
    result = runner.invoke(app, [str(path)])
    assert result.exit_code == 1 and "boundary_drift" in result.output
