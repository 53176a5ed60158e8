import pytest
from pydantic import ValidationError

from factory.errors import UsageError
from factory.filters import (
    FILTER_ORDER,
    FilterChain,
    FiltersConfig,
    TokenCounts,
    build_filter,
)
from factory.protocols import Filter
from factory.records import Verdict
from tests.filters.attempt_builder import attempt, bash, distinct, patch_for, submit

HF = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ" + "01234567"


def mixed_run():
    loop = [bash("pytest")] * 10 + [submit()]
    return [
        attempt(distinct(3, "a"), index=0, patch=patch_for("return 2")),
        attempt(distinct(4, "b"), index=1, patch=patch_for("return  2")),  # duplicate patch of #0
        attempt(distinct(5, "c"), index=2, patch=patch_for("return 3")),
        attempt(distinct(6, "d"), index=3, patch=patch_for("return 4")),
        attempt(distinct(7, "e"), index=4, patch=patch_for("return 5")),  # over the cap
        attempt(loop, index=5, patch=patch_for("return 6")),
        attempt(index=6).model_copy(update={"verdict": Verdict(resolved=False)}),
        attempt(distinct(3), instance_id="t-2", outputs=["x", f"token {HF}", "y"]),
        attempt(distinct(400, "long"), instance_id="t-3"),
    ]


def test_the_funnel_counts_every_drop_with_its_reason():
    attempts = mixed_run()
    config = FiltersConfig.model_validate({"length": {"max_tokens": 2000}, "dedup": {"by": "patch"}})
    result = FilterChain.from_config(config).run(attempts)
    assert [s.name for s in result.steps] == list(FILTER_ORDER)
    assert result.funnel() == [
        ("attempts", 9),
        ("resolved", 8),
        ("loops", 7),
        ("length", 6),
        ("dedup", 5),
        ("cap", 4),
        ("secrets", 4),
    ]
    assert result.format_funnel().startswith("attempts 9 -> resolved 8 -> loops 7")
    reasons = {(d.filter, str(d.reason)) for d in result.drops}
    assert reasons == {
        ("resolved", "not_resolved"),
        ("loops", "repeated_action"),
        ("length", "too_long"),
        ("dedup", "duplicate_patch"),
        ("cap", "over_cap"),
    }
    assert len(result.drops) + len(result.kept) == len(attempts)
    assert {s.name: dict(s.reasons) for s in result.steps}["cap"] == {"over_cap": 1}
    assert result.steps[-1].flags == {"secret_redacted": 1}
    assert [f.key.instance_id for f in result.flags] == ["t-2"]
    redacted = next(a for a in result.kept if a.key.instance_id == "t-2")
    assert HF not in redacted.trajectory.messages[5].content


def test_a_disabled_filter_does_not_run():
    config = FiltersConfig.model_validate({"loops": {"enabled": False}, "cap": {"enabled": False}})
    result = FilterChain.from_config(config).run(mixed_run())
    assert "loops" not in [s.name for s in result.steps]
    assert "cap" not in [s.name for s in result.steps]


def test_the_length_filter_uses_the_counter_it_is_given():
    def counter(trajectory):
        return TokenCounts(total=10**6, assistant=1)

    result = FilterChain.from_config(count_tokens=counter).run([attempt()])
    assert result.kept == [] and result.drops[0].detail == "1000000 tokens > 32768"


def test_an_unknown_filter_name_lists_the_valid_ones():
    with pytest.raises(ValidationError, match="unknown filter 'loop'; valid: cap, dedup, length, loops, resolved, secrets"):
        FiltersConfig.model_validate({"loop": {}})
    with pytest.raises(UsageError, match="^unknown filter 'dedupe'; valid: cap, dedup, length, loops, resolved, secrets$"):
        build_filter("dedupe")
    with pytest.raises(UsageError, match="^unknown filter 'caps'; valid: cap, "):
        FiltersConfig().override({"caps.per_task": 2})


def test_options_are_checked():
    with pytest.raises(ValidationError):
        FiltersConfig.model_validate({"cap": {"per_tsk": 3}})
    with pytest.raises(UsageError, match="filters.cap: .*per_task"):
        build_filter("cap", {"per_task": 0})


def test_overrides_from_the_command_line():
    config = FiltersConfig().override({"cap.per_task": 1, "loops.min_repeats": 4})
    assert (config.cap.per_task, config.loops.min_repeats) == (1, 4)
    assert FiltersConfig().cap.per_task == 3
    with pytest.raises(UsageError, match="no setting 'per_tasks'; valid settings: enabled, per_task, seed"):
        FiltersConfig().override({"cap.per_tasks": 1})
    with pytest.raises(UsageError, match="unknown filter 'caps'"):
        FiltersConfig().override({"caps.per_task": 1})
    with pytest.raises(UsageError, match="filters.cap.per_task"):
        FiltersConfig().override({"cap.per_task": -1})


def test_filters_meet_the_stage_protocol():
    attempts = mixed_run()
    for name in FILTER_ORDER:
        stage: Filter = build_filter(name)
        kept, dropped = stage.apply(attempts)
        assert all(isinstance(reason, str) for _, reason in dropped)
        assert len(kept) + len(dropped) == len(attempts)
    chain: Filter = FilterChain.from_config()
    kept, dropped = chain.apply(attempts)
    assert {a.key.index for a, _ in dropped} >= {5, 6}


def test_the_same_attempt_twice_is_refused():
    a = attempt()
    with pytest.raises(UsageError, match="appears twice"):
        FilterChain.from_config().run([a, a])


def test_a_filter_is_its_module_and_one_registry_entry():
    """The pipeline's section, the card's glossary and the warehouse's steps come from the registry."""
    from factory.filters import FILTERS, FUNNEL_STEPS, DropReason, drop_meanings

    assert list(FiltersConfig.model_fields) == list(FILTERS) == list(FUNNEL_STEPS[:-1])
    assert list(FILTERS) == ["resolved", "loops", "length", "dedup", "cap", "secrets"]  # the chain's order
    assert set(drop_meanings()) == set(DropReason)  # every code has a meaning, given by the filter using it
    assert all(spec.reasons for spec in FILTERS.values())
