import pytest

from factory.errors import UsageError
from factory.output import CLI_OVERRIDES, BuildSettings, build_dataset
from factory.output.validate import read_metadata
from tests.output.sample_run import PIPELINE_YAML, TASKS, demo_attempts


def build(out, settings):
    return build_dataset(demo_attempts(), PIPELINE_YAML, out, settings, tasks=TASKS)


def test_a_rebuild_with_other_settings_rewrites_the_dataset(tmp_path):
    out = tmp_path / "out"
    first = build(out, BuildSettings())
    assert first.rows == 4
    second = build(out, BuildSettings().with_overrides(per_task=1, min_repeats=None))
    assert second.rows == 2  # one per task that has a kept run
    assert [s.name for s in second.chain.steps][-2:] == ["cap", "secrets"]
    assert second.chain.steps[4].reasons == {"over_cap": second.chain.steps[3].n_out - 2}  # all past dedup but one a task
    assert "    per_task: 1" in second.card.read_text()
    assert read_metadata(second.card.read_text())["size_categories"] == ["n<1K"]


def test_a_lower_loop_threshold_drops_more(tmp_path):
    settings = BuildSettings().with_overrides(min_repeats=2, max_period=3)
    summary = build(tmp_path / "out", settings)
    assert summary.chain.steps[1].reasons["repeated_action"] == 1
    assert summary.chain.steps[1].n_out < summary.chain.steps[1].n_in


def test_unknown_build_options_are_named():
    with pytest.raises(UsageError, match="unknown build option 'per_tasks'; valid options: per_task"):
        BuildSettings().with_overrides(per_tasks=2)
    with pytest.raises(UsageError, match="filters.cap.per_task"):
        BuildSettings().with_overrides(per_task=0)
    assert set(CLI_OVERRIDES) >= {"per_task", "min_repeats", "max_tokens"}


def test_the_summary_prints_the_funnel(tmp_path):
    text = build(tmp_path / "out", BuildSettings()).format()
    assert text.splitlines()[0] == (
        "funnel: attempts 10 -> resolved 7 -> loops 6 -> length 6 -> dedup 6 -> cap 4 -> secrets 4"
    )
    assert "  resolved: not_resolved 1, no_trajectory 1, not_submitted 1" in text
    assert "  secrets: secret_redacted 1" in text
    assert f"card: {tmp_path / 'out' / 'README.md'}" in text


def test_drops_and_flags_come_back_for_the_warehouse(tmp_path):
    summary = build(tmp_path / "out", BuildSettings())
    rows = [d.to_row() for d in summary.drops]
    assert len(rows) == 6
    assert {"run_id", "instance_id", "teacher", "index", "filter", "reason", "detail"} == set(rows[0])
    assert [f.to_row()["code"] for f in summary.flags] == ["secret_redacted"]
