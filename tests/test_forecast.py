"""The forecast of `factory run --dry-run`: the run's own allocation over simulated tasks, from the
prior or from a pilot run's warehouse; it starts no sandbox and calls no teacher."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from factory.config import parse_pipeline
from factory.records import Turn
from factory.run.forecast import forecast, read_pilot
from factory.run.parts import plan_of
from factory.warehouse import Warehouse
from tests.filters.attempt_builder import attempt

ROOT = Path(__file__).parent.parent
PIPELINE = """\
name: fc
tasks: {{source: tasks.jsonl}}
teachers:
  - {{kind: openai, model: gpt-4.1, name: dear}}
  - {{kind: scripted, name: scripted-cheap}}
agent: {{max_turns: 10, max_tokens: 100000}}
sampling: {{attempts_per_task: 6{extra}}}
"""


def pilot_warehouse(tmp_path: Path, passes: dict[str, float], attempts: int = 5) -> Path:
    """A pilot run `pilot` of 10 tasks x `attempts` per teacher; teacher -> share resolved; $0.40 each."""
    path = tmp_path / "runs" / "pilot" / "warehouse.duckdb"
    now = datetime.now(UTC)
    with Warehouse(path) as warehouse:
        for task in range(10):
            for teacher, share in passes.items():
                for i in range(attempts):
                    a = attempt(instance_id=f"t{task}", teacher=teacher, index=i, resolved=i < attempts * share,
                                run_id="pilot")
                    a.trajectory.turns = [Turn(cost_usd=0.4 if teacher == "dear" else 0.0)]
                    warehouse.record_attempt(a, started_at=now, finished_at=now)
    return path


def test_a_pilot_that_always_passes_forecasts_the_cap_and_one_that_never_does_forecasts_the_hopeless_stop(tmp_path):
    p = parse_pipeline(PIPELINE.format(extra=""))
    easy = read_pilot(pilot_warehouse(tmp_path / "easy", {"dear": 1.0, "scripted-cheap": 1.0}), "pilot", (0.25, 0.65))
    f = forecast(plan_of(p), 50, easy)
    assert easy.cost == {"dear": pytest.approx(0.4), "scripted-cheap": 0.0} and easy.attempts == 100
    assert 140 <= f.kept[0] <= f.kept[1] <= 150 and f.attempts[1] < 0.4 * f.most_attempts == 240
    assert f.cost is not None and 0 < f.cost[0] <= f.cost[1] <= 0.4 * f.attempts[1]
    assert f.ceiling is not None and f.ceiling > f.cost[1]
    never = {"dear": 0.0, "scripted-cheap": 0.0}
    hard = read_pilot(pilot_warehouse(tmp_path / "hard", never, attempts=30), "pilot", (0.25, 0.65))
    g = forecast(plan_of(p), 50, hard)  # 0 of 30 is taken as a pass rate of 0.008 (shrunk toward the prior)
    assert g.kept[1] < 0.1 * f.kept[0] and g.saved["hopeless"] > 0.25 * g.most_attempts
    # each teacher is hopeless after 4 failures: 8 of 12 per task, and a few more bet in flight
    assert 400 <= g.attempts[0] <= g.attempts[1] <= 0.75 * g.most_attempts


def test_the_forecast_says_where_a_budget_would_stop_the_run(tmp_path):
    from factory.run.forecast import forecast_lines

    pilot = read_pilot(pilot_warehouse(tmp_path, {"dear": 0.6, "scripted-cheap": 0.2}), "pilot", (0.25, 0.65))
    f = forecast(plan_of(parse_pipeline(PIPELINE.format(extra="") + "budget: {max_cost_usd: 10}\n")), 100, pilot)
    assert f.cost is not None and f.cost[1] > 10 and f.budget == 10
    [line] = [line for line in forecast_lines(f) if line.startswith("budget")]
    fits = int(line.split("about ")[1].split()[0])
    # dear attempts cost $0.40 and cheap ones nothing: more than 25 attempts fit in $10
    assert line.startswith("budget $10.00 runs out first") and fits == round(10 * f.attempts[1] / f.cost[1]) > 25
    rich = forecast(plan_of(parse_pipeline(PIPELINE.format(extra="") + "budget: {max_cost_usd: 10000}\n")), 100, pilot)
    assert "budget $10000.00 covers the expected cost" in forecast_lines(rich)


def test_without_a_pilot_the_prior_gives_a_range_and_a_turned_off_stop_spends_everything(tmp_path):
    f = forecast(plan_of(parse_pipeline(PIPELINE.format(extra=""))), 200)
    assert f.cost is None and f.ceiling is not None  # no pilot cost; the price gives the most
    assert 0 < f.kept[0] <= f.kept[1] < 3 * 200 and f.attempts[1] < f.most_attempts
    off = forecast(plan_of(parse_pipeline(PIPELINE.format(extra=", hopeless: {enabled: false}")
                                          + "filters: {cap: {enabled: false}}\n")), 200)
    assert off.attempts == (2400, 2400) and not off.saved


def test_the_dry_run_prints_the_forecast_from_a_pilot_and_starts_nothing(tmp_path):
    pilot_warehouse(tmp_path, {"dear": 0.6, "scripted-cheap": 0.2})
    (tmp_path / "runs" / "pilot" / "run.json").write_text('{"run_id": "pilot"}')
    path = tmp_path / "p.yaml"  # a Hub source: a dry run reads none of it
    path.write_text(PIPELINE.format(extra="").replace("{source: tasks.jsonl}", "{source: SWE-bench/SWE-smith, limit: 40}"))
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent.sock", "OPENAI_API_KEY": "",
           "OPENAI_BASE_URL": "http://127.0.0.1:9"}
    out = subprocess.run([sys.executable, "-m", "factory.cli", "run", str(path), "--dry-run", "--pilot",
                          str(tmp_path / "runs" / "pilot")], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    lines = [line.strip() for line in out.stdout.splitlines()]
    assert any(line.startswith("forecast") and "40 task(s)" in line and "pilot pilot (10 tasks, 100 attempts)" in line
               for line in lines)
    assert any(line.startswith("attempts ") and "(of 480 at most), kept rows" in line for line in lines)
    assert any(line.startswith("cost expected $") for line in lines)
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["pilot"]  # no run folder was made
    bad = subprocess.run([sys.executable, "-m", "factory.cli", "run", str(path), "--pilot", "x"],
                         capture_output=True, text=True, cwd=tmp_path, env=env)
    assert bad.returncode == 2 and bad.stderr.strip() == "factory: --pilot goes with --dry-run: it is what the forecast reads"


# The demo run of issue 33 (pipelines/demo.yaml, 20 tasks, scripted teacher), per task in the order
# its attempts were made: K kept, d a pass that dedup dropped (the scripted teacher repeats its
# fixes), l a pass that the loops filter dropped, . unresolved. It made 98 attempts and kept 49 rows.
DEMO_RUN = ["K.KdK", ".K.Kd.", "KKdddd", "K.K..K", "...", "K.K.dK", "..KKK", "K.KK", "KK.dK", "..KKdK",
            ".Kl.K.", "KK.dK", "KK.K", ".KKK", "K..dKK", ".KKK", "...", "KK..K", "K.....", "KKK"]


def demo_pilot(tmp_path: Path) -> Path:
    from factory.filters.base import Drop, DropReason
    from factory.records import AttemptKey

    path = tmp_path / "runs" / "demo" / "warehouse.duckdb"
    now = datetime.now(UTC)
    drops = []
    with Warehouse(path) as warehouse:
        for task, seq in enumerate(DEMO_RUN):
            for i, mark in enumerate(seq):
                a = attempt(instance_id=f"t{task:02}", teacher="scripted", index=i, resolved=mark != ".", run_id="demo")
                warehouse.record_attempt(a, started_at=now, finished_at=now)
                key = AttemptKey(run_id="demo", instance_id=f"t{task:02}", teacher="scripted", index=i)
                why = {".": ("resolved", DropReason.not_resolved), "d": ("dedup", DropReason.duplicate_patch),
                       "l": ("loops", DropReason.repeated_action)}.get(mark)
                if why:
                    drops.append(Drop(key, why[0], why[1]).to_row())
        warehouse.record_drops("demo", drops)
    return path


def test_the_demo_run_as_its_own_pilot_is_inside_the_range_it_forecasts(tmp_path):
    from factory.config import load_pipeline

    demo = load_pipeline(ROOT / "pipelines" / "demo.yaml")
    pilot = read_pilot(demo_pilot(tmp_path), "demo", demo.sampling.hopeless.prior)
    assert pilot.attempts == 98 and len(pilot.rates) == 20
    assert pilot.fresh[2] < 0.5 < pilot.fresh[-1]  # the task whose fix repeats, and one that never did
    f = forecast(plan_of(demo), 20, pilot)
    assert f.attempts[0] <= 98 <= f.attempts[1] and f.kept[0] <= 49 <= f.kept[1]


@pytest.mark.parametrize("reality", range(4))
def test_a_simulated_run_as_its_own_pilot_is_inside_the_range_it_forecasts(reality):
    """A population whose tasks repeat their passes as often as the demo's: one run of it (the
    simulation, seeded) is the pilot, and the forecast from it brackets that run."""
    import random

    from factory.run.forecast import Pilot, simulate

    p = parse_pipeline(PIPELINE.format(extra=", give_up_after_failures: 3, max_in_flight: 6").replace(
        "  - {kind: openai, model: gpt-4.1, name: dear}\n", "") + "filters: {cap: {per_task: 3}}\n")
    rng = random.Random(reality)
    rates = {f"t{i}": {"scripted-cheap": rng.choice([0.0, 0.2, 0.5, 0.7, 0.9])} for i in range(30)}
    fresh = {t: rng.choice([0.2, 0.7, 1.0]) for t in rates}
    run = simulate(rates, p.sampling, ["scripted-cheap"], 3, lambda _t, _r: 0.0, seed=100 + reality, fresh=fresh)
    pilot = Pilot.of("sim", run.record, p.sampling.hopeless.prior)
    f = forecast(plan_of(p), 30, pilot)
    assert f.attempts[0] <= run.attempts <= f.attempts[1] and f.kept[0] <= run.kept <= f.kept[1]
    assert run.kept < sum(r.passed for r in run.record)  # the repeats are real: every pass a row would miss
