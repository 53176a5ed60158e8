"""Prices per model, overrides, and the 'unknown, never 0' rule."""

from __future__ import annotations

import logging

import pytest

from factory.records import Usage
from factory.teachers import AnthropicConfig, AnthropicTeacher, Price, prices
from factory.teachers.prices import PRICES, cost_usd, lookup
from tests.teachers.fake_api import anthropic_message
from tests.teachers.samples import CONVERSATION, FAKE_KEY

USAGE = Usage(
    input_tokens=1_000_000,
    output_tokens=1_000_000,
    cache_read_tokens=1_000_000,
    cache_write_tokens=1_000_000,
)


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("anthropic/claude-haiku-4-5", "claude-haiku-4-5"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-5-mini-2025-08-07", "gpt-5-mini"),
        ("o3-2025-04-16", "o3"),
        ("o4-mini", "o4-mini"),
    ],
)
def test_models_match_their_entry(model, key):
    assert lookup(model) is PRICES[key]


@pytest.mark.parametrize(
    "model", ["claude-opus-4-9", "gpt-4o-audio-preview", "gpt-5.5", "Qwen/Qwen3-8B", "o3-pro"]
)
def test_a_longer_name_does_not_borrow_a_shorter_models_price(model):
    assert lookup(model) is None


def test_cost_counts_every_kind_of_token():
    # claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write
    assert cost_usd("claude-sonnet-4-5", USAGE) == pytest.approx(3 + 15 + 0.3 + 3.75)
    assert cost_usd("gpt-4.1", Usage(input_tokens=500_000, output_tokens=250_000)) == pytest.approx(
        1 + 2
    )


def test_an_override_wins_over_the_table():
    price = Price(input=1, output=2, cache_read=0, cache_write=0)

    assert cost_usd("claude-sonnet-4-5", USAGE, price) == pytest.approx(3)
    assert cost_usd("my-local-model", USAGE, price) == pytest.approx(3)


def test_an_unknown_model_warns_once_and_costs_none(caplog, monkeypatch):
    monkeypatch.setattr(prices, "_warned", set())
    caplog.set_level(logging.WARNING, logger="factory.teachers")
    first = cost_usd("mystery-model-7b", USAGE)
    second = cost_usd("mystery-model-7b", USAGE)

    assert first is None and second is None
    warnings = [r for r in caplog.records if "mystery-model-7b" in r.getMessage()]
    assert len(warnings) == 1
    assert "price:" in warnings[0].getMessage()


def test_prices_are_checked():
    with pytest.raises(ValueError):
        Price(input=-1, output=1, cache_read=0, cache_write=0)
    with pytest.raises(ValueError):
        Price(input=1, output=1, cache_read=0)  # every rate is required


async def test_a_teacher_uses_its_price_override(fake_api):
    teacher = AnthropicTeacher(
        AnthropicConfig(
            model="claude-custom-finetune",
            base_url=fake_api.anthropic_url,
            api_key=FAKE_KEY,
            price={"input": 10, "output": 20, "cache_read": 1, "cache_write": 12},
        )
    )
    fake_api.anthropic(
        anthropic_message(
            "ok",
            usage={
                "input_tokens": 100,
                "output_tokens": 10,
                "cache_read_input_tokens": 1000,
                "cache_creation_input_tokens": 50,
            },
        )
    )
    completion = await teacher.complete(CONVERSATION, [])
    await teacher.aclose()

    assert completion.cost_usd == pytest.approx((100 * 10 + 10 * 20 + 1000 * 1 + 50 * 12) / 1e6)


async def test_a_teacher_without_a_price_records_cost_unknown(fake_api):
    teacher = AnthropicTeacher(
        AnthropicConfig(
            model="claude-unreleased", base_url=fake_api.anthropic_url, api_key=FAKE_KEY
        )
    )
    fake_api.anthropic(anthropic_message("ok"))
    completion = await teacher.complete(CONVERSATION, [])
    await teacher.aclose()

    assert completion.cost_usd is None
    assert completion.usage.input_tokens == 10
