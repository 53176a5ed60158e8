"""A run that mixes terminal tasks (Harbor: the demo-terminal set) with Python SWE tasks, end to
end: the scripted teacher, real sandboxes, each task judged its own way (a patch, or a frozen final
state), the warehouse, the dataset and its card. Rows of both kinds are kept."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from factory.config import load_pipeline
from factory.records import Exit, Guarantee
from factory.run.progress import QuietProgress
from factory.run.runner import run_pipeline
from factory.warehouse import run_query

pytestmark = pytest.mark.docker
TASKSETS = Path(__file__).parent.parent / "pipelines" / "tasksets"


def scripted(name: str, outcome: str) -> str:
    rates = {k: float(k == outcome) for k in ("solve", "wrong_fix", "loop", "format_error", "give_up")}
    return f"  - {{kind: scripted, model: scripted-test, name: {name}, seed: 1, profile: {rates}}}\n"


def pipeline_file(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.yaml"
    path.write_text(
        f"name: mixed\ntasks:\n  source:\n    - {TASKSETS / 'demo'}\n    - {TASKSETS / 'demo-terminal'}\n"
        "  limit_per_source: 2\n"
        "teachers:\n" + scripted("scripted-solver", "solve") + scripted("scripted-wrong", "wrong_fix")
        + f"""\
agent: {{max_turns: 30, command_timeout: 120}}
sandbox: {{memory: 1g, max_live: 4}}
sampling: {{attempts_per_task: 1, max_in_flight: 2}}
verifier: {{timeout: 300}}
output: {{dir: {tmp_path / "runs"}}}
""")
    return path


async def test_a_run_of_terminal_and_swe_tasks_keeps_rows_of_both(tmp_path, docker_client):
    outcome = await run_pipeline(load_pipeline(pipeline_file(tmp_path)), run_id="terminal-mix",
                                 progress=QuietProgress(), command="test")
    store = outcome.store
    # each task: the solver's attempt resolves, the wrong fix does not, whichever way it is judged
    rows = run_query(store.warehouse_path, "SELECT instance_id, teacher, resolved FROM v_attempts "
                                           "ORDER BY instance_id, teacher").rows
    terminal = {"build-zipapp", "configure-service"}
    assert len(rows) == 8 and {r[0] for r in rows} >= terminal
    assert all(resolved == (teacher == "scripted-solver") for _, teacher, resolved in rows), rows
    kept = pq.read_table(sorted((store.dataset_dir / "messages").glob("*.parquet"))[0]).to_pylist()
    assert len(kept) == 4 and sorted(r["language"] for r in kept) == ["python", "python", "shell", "shell"]
    # what each verdict rests on, and a terminal task's reward, reach the warehouse, the rows and the card
    judged = run_query(store.warehouse_path, "SELECT instance_id, teacher, guarantee, reward FROM v_attempts").rows
    assert {(i in terminal, g, r) for i, _, g, r in judged} == {
        (True, "final-state", 1.0), (True, "final-state", 0.0), (False, "patch", None)}
    assert {(r["language"], r["guarantee"], r["reward"]) for r in kept} == {("shell", "final-state", 1.0),
                                                                            ("python", "patch", None)}
    card = (store.dataset_dir / "README.md").read_text()
    assert "2 of the 4 rows are terminal tasks" in card and "rests on a state the agent chose" in card
    assert "| final-state | 2 |" in card and "| patch | 2 |" in card and "(kept rewards: 1 to 1)" in card


async def test_a_terminal_task_s_agent_timeout_stops_the_agent_and_its_state_is_judged(tmp_path, docker_client):
    folder = Path(shutil.copytree(TASKSETS / "demo-terminal" / "repair-json", tmp_path / "demo-terminal" / "repair-json"))
    toml = folder / "task.toml"
    toml.write_text(toml.read_text().replace("[agent]\ntimeout_sec = 300.0", "[agent]\ntimeout_sec = 2.0"))
    path = tmp_path / "timeout.yaml"
    path.write_text(
        f"name: timeout\ntasks: {{source: {tmp_path / 'demo-terminal'}}}\n"
        "teachers:\n  - {kind: scripted, model: scripted-test, seed: 1, profile: {solve: 0, wrong_fix: 0, loop: 0, "
        "format_error: 0, give_up: 0, latency_seconds: 0.5}}\n"  # wanders until a limit stops it
        f"agent: {{max_turns: 30, max_wall_seconds: 600}}\nsampling: {{attempts_per_task: 1}}\n"
        f"output: {{dir: {tmp_path / 'runs'}}}\n")
    outcome = await run_pipeline(load_pipeline(path), run_id="agent-timeout", progress=QuietProgress(), command="test")
    [attempt] = outcome.store.attempts()
    # without the task's limit the pipeline's would end it: 30 turns of 0.5 s (max_turns), not a timeout
    assert attempt.trajectory.exit is Exit.timeout
    assert sum(m.role == "assistant" for m in attempt.trajectory.messages) < 10
    assert attempt.verdict.guarantee is Guarantee.final_state and attempt.verdict.reward == 0.0


async def test_the_scripted_teacher_leaves_a_service_running_and_the_wrong_fix_does_not(tmp_path, docker_client):
    shutil.copytree(TASKSETS / "demo-terminal" / "serve-status", tmp_path / "demo-terminal" / "serve-status")
    path = tmp_path / "services.yaml"
    path.write_text(f"name: services\ntasks: {{source: {tmp_path / 'demo-terminal'}}}\n"
                    "teachers:\n" + scripted("scripted-solver", "solve") + scripted("scripted-wrong", "wrong_fix")
                    + f"agent: {{max_turns: 30}}\nsampling: {{attempts_per_task: 1}}\noutput: {{dir: {tmp_path / 'runs'}}}\n")
    outcome = await run_pipeline(load_pipeline(path), run_id="services", progress=QuietProgress(), command="test")
    verdicts = {a.key.teacher: a.verdict for a in outcome.store.attempts()}
    assert verdicts["scripted-solver"].resolved, verdicts["scripted-solver"].detail
    assert [str(f) for f in verdicts["scripted-solver"].flags] == ["services: python3 /app/status/server.py (port 8081)"]
    assert not verdicts["scripted-wrong"].resolved and verdicts["scripted-wrong"].reward == 0.0
