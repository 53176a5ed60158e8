"""The scripted teacher: its config and labels, its profile's rates, and each outcome played
for real through the agent loop on the demo tasks (host-folder sandbox, no Docker)."""

from __future__ import annotations

import math
import re
import subprocess
from collections import Counter

import pytest
from pydantic import ValidationError

from factory.agent import run_agent
from factory.config import AgentConfig
from factory.errors import TeacherFatal
from factory.filters.actions import actions
from factory.filters.loops import find_loop
from factory.records import Exit, Task
from factory.tasks import load_taskset
from factory.teachers import build_teacher, kinds
from factory.teachers.playbook import Outcome
from factory.teachers.scripted import ScriptedConfig, ScriptedProfile, ScriptedTeacher
from tests.agent.local_sandbox import DEMO, LocalSandbox

ONLY = {
    o: ScriptedProfile(**{k.value: float(k is o) for k in Outcome if k is not Outcome.wander})
    for o in Outcome
}
"""A profile that always plays one outcome."""
DEMO_TASKS = {t.instance_id: t for t in load_taskset(str(DEMO)).tasks}
DEMO_IDS = list(DEMO_TASKS)


@pytest.fixture
def demo_tasks() -> dict[str, Task]:
    return DEMO_TASKS


def only(outcome: Outcome, seed: int = 0) -> ScriptedTeacher:
    return ScriptedTeacher(ScriptedConfig(seed=seed, profile=ONLY[outcome]))


async def attempt(teacher, task, tmp_path, config: AgentConfig | None = None, seed: int = 0):
    sandbox, local_task = LocalSandbox.for_task(task, tmp_path)
    return await run_agent(
        local_task, teacher, sandbox, config or AgentConfig(max_turns=30), attempt_seed=seed
    ), sandbox


def post_images(patch: str) -> dict[str, str]:
    """Per file, the blob hash (7 hex digits) of its content after the patch."""
    files = re.findall(r"^diff --git a/(\S+) .*\nindex [0-9a-f]+\.\.([0-9a-f]{7})", patch, re.M)
    return dict(files)


# ------------------------------------------------------------------ config and labels


def test_it_is_registered_and_built_from_a_pipeline_entry():
    assert "scripted" in kinds()
    teacher = build_teacher(
        {"kind": "scripted", "model": "scripted-realistic", "name": "scripted", "seed": 3}
    )
    assert isinstance(teacher, ScriptedTeacher)
    assert (teacher.name, teacher.model, teacher.config.seed, teacher.scripted) == (
        "scripted",
        "scripted-realistic",
        3,
        True,
    )
    assert build_teacher({"kind": "scripted"}).name == "scripted-agent"


@pytest.mark.parametrize(
    "fields, says",
    [
        ({"model": "claude-sonnet-5-5"}, "must start with 'scripted'"),
        ({"name": "sonnet"}, "must start with 'scripted'"),
        ({"profile": {"solve": 0.7, "wrong_fix": 0.4}}, "at most 1"),
        ({"profile": {"solve": 1.5}}, "less than or equal to 1"),
        ({"profile": {"succeed": 0.5}}, "Extra inputs are not permitted"),
        ({"temperature": 0.5}, "Extra inputs are not permitted"),
    ],
)
def test_bad_configs_are_refused(fields, says):
    with pytest.raises(ValidationError, match=re.escape(says)):
        ScriptedConfig(**fields)


def test_the_rest_of_the_profile_wanders():
    rates = ScriptedProfile(
        solve=0.5, wrong_fix=0.2, loop=0.1, format_error=0.05, give_up=0.05
    ).rates()
    assert rates[Outcome.wander] == pytest.approx(0.1)
    assert sum(rates.values()) == pytest.approx(1)
    assert ScriptedConfig.model_fields["profile"].description  # documented


async def test_without_a_session_it_refuses_to_answer():
    with pytest.raises(TeacherFatal, match="run_agent"):
        await ScriptedTeacher().complete([], [])


# ------------------------------------------------------------------ rates and seeds


@pytest.mark.parametrize(
    "profile",
    [
        ScriptedProfile(),
        ScriptedProfile(solve=0.3, wrong_fix=0.3, loop=0.2, format_error=0.1, give_up=0.02),
    ],
)
def test_outcomes_match_the_profile_over_many_attempts(profile, demo_tasks):
    teacher = ScriptedTeacher(ScriptedConfig(seed=11, profile=profile))
    tasks = list(demo_tasks.values())
    n = 3000
    counts = Counter(teacher.outcome(tasks[i % len(tasks)], i) for i in range(n))
    for outcome, rate in profile.rates().items():
        slack = 4.5 * math.sqrt(rate * (1 - rate) / n) + 1e-9
        assert abs(counts[outcome] / n - rate) <= slack, (outcome, counts[outcome], rate)


def test_outcomes_are_reproducible_from_the_seed(demo_tasks):
    task = next(iter(demo_tasks.values()))

    def draw(seed: int) -> list[Outcome]:
        return [ScriptedTeacher(ScriptedConfig(seed=seed)).outcome(task, i) for i in range(200)]

    assert draw(1) == draw(1)
    assert draw(1) != draw(2)
    teacher = ScriptedTeacher(ScriptedConfig(seed=1))
    assert [teacher.session(task, i).outcome for i in range(200)] == draw(1)


async def test_the_same_seed_plays_the_same_attempt(demo_tasks, tmp_path):
    task = demo_tasks["factory-demo__iniconf.get-int-bool"]
    teacher = ScriptedTeacher(ScriptedConfig(seed=5))
    runs = [
        (await attempt(teacher, task, tmp_path / str(i), seed=s))[0]
        for i, s in enumerate([4, 4, 9])
    ]
    calls = [
        [
            (c.name, c.arguments.replace(str(tmp_path / str(i)), ""))
            for m in t.messages
            for c in m.tool_calls
        ]
        for i, t in enumerate(runs)
    ]
    assert calls[0] == calls[1] and runs[0].patch == runs[1].patch
    assert calls[0] != calls[2]


# ------------------------------------------------------------------ each outcome, played


@pytest.mark.parametrize("instance_id", DEMO_IDS)
async def test_solve_applies_the_gold_fix_like_an_agent(instance_id, demo_tasks, tmp_path):
    task = demo_tasks[instance_id]
    t, _ = await attempt(only(Outcome.solve), task, tmp_path)
    assert t.exit is Exit.submitted and t.error is None
    fixes = [post_images(f) for f in (task.gold_patch, *task.alt_fixes)]
    assert post_images(t.patch) in fixes  # the content of a correct fix
    assert t.scripted and t.model.startswith("scripted") and t.teacher.startswith("scripted")
    assert t.cost_usd == 0.0 and all(
        turn.usage.input_tokens > 100 and turn.usage.output_tokens > 0 for turn in t.turns
    )
    used = [(c.name, c.arguments) for m in t.messages for c in m.tool_calls]
    assert any(name == "bash" and "grep -rn" in args for name, args in used)
    assert any('"view"' in args and "view_range" in args for name, args in used)
    assert any('"str_replace"' in args for name, args in used)
    assert used[-1] == ("submit", "{}")
    assert not any(m.content.startswith("Error") for m in t.messages if m.role == "tool")


async def test_solves_of_a_task_with_other_correct_fixes_end_in_each_of_them(demo_tasks, tmp_path):
    task = demo_tasks["factory-demo__iniconf.shared-list"]
    fixes = [post_images(f) for f in (task.gold_patch, *task.alt_fixes)]
    assert len(fixes) == 3 and len({tuple(f.items()) for f in fixes}) == 3
    made = []
    for seed in range(8):
        t, _ = await attempt(only(Outcome.solve), task, tmp_path / str(seed), seed=seed)
        made.append(fixes.index(post_images(t.patch)))
    assert set(made) == {0, 1, 2}


@pytest.mark.parametrize("instance_id", DEMO_IDS)
async def test_wrong_fix_edits_the_right_file_and_leaves_the_bug(instance_id, demo_tasks, tmp_path):
    task = demo_tasks[instance_id]
    t, sandbox = await attempt(only(Outcome.wrong_fix), task, tmp_path)
    assert t.exit is Exit.submitted
    assert t.patch and set(post_images(t.patch)) == set(post_images(task.gold_patch))
    assert post_images(t.patch) != post_images(task.gold_patch)
    # with the hidden tests back, the tests that the real fix makes pass still fail
    for path in task.start.hide_paths:
        (sandbox.root / path).write_text(
            (DEMO / "repos" / task.repo.split("/")[-1] / path).read_text()
        )
    run = subprocess.run(
        ["python", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *task.FAIL_TO_PASS],
        cwd=sandbox.root,
        env=sandbox.env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1, run.stdout[-2000:]


@pytest.mark.parametrize("seed", range(4))
async def test_loop_repeats_one_action_ten_times_or_more(seed, demo_tasks, tmp_path):
    task = demo_tasks[DEMO_IDS[seed * 4]]
    t, _ = await attempt(only(Outcome.loop), task, tmp_path, AgentConfig(max_turns=25), seed=seed)
    loop = find_loop(actions(t), min_repeats=10, max_period=1)
    assert loop is not None and loop.length >= 10
    assert t.exit in (Exit.submitted, Exit.max_turns)
    assert (t.exit is Exit.submitted) == bool(t.patch)


async def test_format_error_ends_the_attempt_or_is_fixed_when_re_prompted(demo_tasks, tmp_path):
    task = demo_tasks[DEMO_IDS[0]]
    t, _ = await attempt(only(Outcome.format_error), task, tmp_path / "a")
    assert t.exit is Exit.format_error and "not valid JSON" in t.error and t.patch == ""
    t, _ = await attempt(
        only(Outcome.format_error), task, tmp_path / "b", AgentConfig(format_error_retries=1)
    )
    assert t.exit is Exit.submitted and post_images(t.patch) == post_images(task.gold_patch)


@pytest.mark.parametrize("seed", range(3))
async def test_give_up_stops_without_a_change(seed, demo_tasks, tmp_path):
    t, _ = await attempt(only(Outcome.give_up), demo_tasks[DEMO_IDS[seed]], tmp_path, seed=seed)
    assert t.exit is Exit.submitted and t.patch == ""
    assert "without a change" in t.messages[-1].content or "unchanged" in t.messages[-1].content


async def test_wander_explores_until_the_turn_limit_without_looping(demo_tasks, tmp_path):
    t, _ = await attempt(
        only(Outcome.wander), demo_tasks[DEMO_IDS[5]], tmp_path, AgentConfig(max_turns=40)
    )
    assert t.exit is Exit.max_turns and t.patch == ""
    assert find_loop(actions(t), min_repeats=10, max_period=3) is None


async def test_each_turn_takes_its_seeded_latency(demo_tasks, tmp_path):
    task = demo_tasks[DEMO_IDS[0]]
    teacher = ScriptedTeacher(
        ScriptedConfig(profile=ScriptedProfile(latency_seconds=0.004, latency_jitter=0.5))
    )
    firsts = [(await teacher.session(task, i).complete([], [])).seconds for i in range(40)]
    assert all(0.002 <= s <= 0.006 for s in firsts) and len(set(firsts)) == 40
    assert (await teacher.session(task, 3).complete([], [])).seconds == firsts[3]

    solver = ScriptedProfile(
        latency_seconds=0.05, solve=1, wrong_fix=0, loop=0, format_error=0, give_up=0
    )
    t, _ = await attempt(
        ScriptedTeacher(ScriptedConfig(profile=solver)), demo_tasks[DEMO_IDS[1]], tmp_path
    )
    assert all(turn.seconds >= 0.05 for turn in t.turns)
