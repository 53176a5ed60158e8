"""The pipeline config: valid files load; bad ones name file, line, column and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory.config import Pipeline, VerifierConfig, load_pipeline, parse_pipeline, teacher_label
from factory.errors import ConfigError

PIPELINES = sorted(Path(__file__).parent.parent.joinpath("pipelines").glob("*.yaml"))

VALID = """\
name: t
tasks:
  source: tasks.jsonl
teachers:
  - kind: scripted
    model: scripted-s
  - kind: openai
    model: gpt-4.1
sampling:
  attempts_per_task: 3
"""


@pytest.mark.parametrize("path", PIPELINES, ids=lambda p: p.name)
def test_every_builtin_pipeline_loads(path):
    pipeline = load_pipeline(path)
    assert isinstance(pipeline, Pipeline)
    assert pipeline.teachers and pipeline.tasks.source


def test_valid_file_fills_defaults_and_resolves_paths(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(VALID)
    p = load_pipeline(path)
    assert p.sampling.attempts_per_task == 3
    assert p.filters.cap.per_task == 3
    assert p.sandbox.network == "none"
    assert teacher_label(p.teachers[1]) == "gpt-4.1"
    assert p.resolve(p.tasks.source) == tmp_path / "tasks.jsonl"


def error_for(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_pipeline(text, "p.yaml")
    return info.value


def test_unknown_key_names_its_line_and_the_valid_keys():
    err = error_for(VALID + "  max_attempts: 4\n")
    assert (err.line, err.column) == (11, 3)
    assert err.field == "sampling.max_attempts"
    assert "unknown key" in err.message and "attempts_per_task" in err.message
    assert str(err).startswith("p.yaml:11:3: sampling.max_attempts: unknown key")


def test_a_removed_setting_says_what_replaced_it():
    err = error_for(VALID + "  stop_after_kept: 4\n")
    assert err.field == "sampling" and "filters.cap.per_task" in err.message
    assert str(err).startswith("p.yaml:")


def test_missing_field_points_at_the_mapping_that_lacks_it():
    err = error_for(VALID.replace("    model: gpt-4.1\n", "    name: x\n"))
    assert err.field == "teachers[1].model"
    assert err.message == "field required"
    assert err.line == 7


def test_an_unknown_teacher_kind_names_its_line_and_the_valid_kinds():
    err = error_for(VALID.replace("kind: openai", "kind: gemini"))
    assert (err.field, err.line) == ("teachers[1].kind", 7)
    assert err.message == "unknown teacher kind 'gemini'; valid: anthropic, openai, scripted"
    err = error_for(VALID.replace("  - kind: openai\n", "  - "))
    assert (err.field, err.message) == ("teachers[1].kind", "field required; valid: anthropic, openai, scripted")


def test_an_unknown_harness_or_executor_names_its_line_and_the_valid_ones():
    err = error_for(VALID + "agent:\n  harnesses:\n    - {name: aider}\nexecutor:\n  kind: slurm\n")
    assert [(p.field, p.line, p.message) for p in err.problems] == [
        ("agent.harnesses[0].name", 13, "unknown harness 'aider'; valid: factory, mini-swe-agent, swe-agent"),
        ("executor.kind", 15, "unknown executor 'slurm'; valid: local, ray"),
    ]


def test_wrong_type_names_the_value():
    err = error_for(VALID.replace("attempts_per_task: 3", "attempts_per_task: many"))
    assert (err.line, err.column) == (10, 22)
    assert err.field == "sampling.attempts_per_task"
    assert "integer" in err.message


def test_every_problem_of_a_file_is_reported_at_once_in_the_file_s_order(monkeypatch):
    monkeypatch.delenv("FACTORY_UNSET_VAR", raising=False)
    text = (VALID.replace("    model: gpt-4.1\n", "    name: x\n").replace("tasks.jsonl", "${FACTORY_UNSET_VAR}")
            + "  max_attempts: 4\n  max_in_flight: lots\nbudgte: {}\n")
    err = error_for(text)
    assert [(p.line, p.column, p.field) for p in err.problems] == [
        (3, 11, "tasks.source"), (7, 5, "teachers[1].model"), (11, 3, "sampling.max_attempts"),
        (12, 18, "sampling.max_in_flight"), (13, 1, "budgte")]
    assert (err.line, err.field) == (3, "tasks.source")  # the first, as a single error reads
    lines = str(err).splitlines()
    assert len(lines) == 5 and all(line.startswith("p.yaml:") for line in lines)
    assert lines[1] == "p.yaml:7:5: teachers[1].model: field required"
    assert lines[2].startswith("p.yaml:11:3: sampling.max_attempts: unknown key (valid keys: ")


def test_a_field_wrong_in_two_ways_is_named_once(monkeypatch):
    monkeypatch.delenv("FACTORY_UNSET_VAR", raising=False)
    err = error_for(VALID.replace("attempts_per_task: 3", "attempts_per_task: ${FACTORY_UNSET_VAR}"))
    assert [p.field for p in err.problems] == ["sampling.attempts_per_task"]
    assert "FACTORY_UNSET_VAR is not set" in err.message


def test_yaml_syntax_error_names_line_and_column():
    err = error_for("name: t\ntasks:\n  source: [unclosed\nteachers: []\n")
    assert err.line == 4
    assert "YAML syntax error" in err.message


def test_top_level_must_be_a_mapping():
    assert "mapping" in error_for("- a\n- b\n").message


def test_env_interpolation_with_default_and_missing(monkeypatch):
    monkeypatch.setenv("FACTORY_TEST_SOURCE", "from-env.jsonl")
    text = VALID.replace("tasks.jsonl", "${FACTORY_TEST_SOURCE}")
    assert parse_pipeline(text).tasks.source == "from-env.jsonl"
    assert parse_pipeline(VALID.replace("tasks.jsonl", "${FACTORY_UNSET_VAR:-d.jsonl}")).tasks.source == "d.jsonl"
    monkeypatch.delenv("FACTORY_UNSET_VAR", raising=False)
    err = error_for(VALID.replace("tasks.jsonl", "${FACTORY_UNSET_VAR}"))
    assert err.field == "tasks.source" and err.line == 3
    assert "FACTORY_UNSET_VAR is not set" in err.message


def test_unreadable_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_pipeline(tmp_path / "nope.yaml")


def test_unknown_teacher_option_is_an_error_and_keys_stay_secret(monkeypatch):
    err = error_for(VALID.replace("    model: gpt-4.1\n", "    model: gpt-4.1\n    modl: x\n"))
    assert err.field == "teachers[1].modl" and "unknown key" in err.message and "base_url" in err.message
    monkeypatch.setenv("FACTORY_TEST_KEY", "sk-secret-value-1")
    p = parse_pipeline(VALID.replace("    model: gpt-4.1\n", "    model: gpt-4.1\n    api_key: ${FACTORY_TEST_KEY}\n"))
    assert p.teachers[1].api_key.get_secret_value() == "sk-secret-value-1"
    assert "sk-secret-value-1" not in repr(p) + str(p.model_dump())


@pytest.mark.parametrize("measured, limit", [(None, 900), (0.0, 900), (2.0, 60), (30.0, 150), (500.0, 900)])
def test_a_validated_task_gets_a_timeout_that_fits_its_tests(measured, limit):
    assert VerifierConfig().timeout_for(measured) == limit
