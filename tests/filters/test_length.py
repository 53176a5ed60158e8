from factory.filters import DropReason, LengthConfig, LengthFilter, TokenCounts, approx_token_counts
from tests.filters.attempt_builder import attempt, distinct


def per_message(trajectory):
    assistant = sum(1 for m in trajectory.messages if m.role == "assistant")
    return TokenCounts(total=100 * len(trajectory.messages), assistant=100 * assistant)


def test_rows_over_the_limit_are_dropped_by_the_given_counter():
    short = attempt(distinct(2), index=0)  # 2 + 2*2 messages = 600 tokens
    long = attempt(distinct(3), index=1)  # 800 tokens
    result = LengthFilter(LengthConfig(max_tokens=600), count_tokens=per_message).run([short, long])
    assert result.kept == [short]
    (drop,) = result.drops
    assert (drop.reason, drop.detail) == (DropReason.too_long, "800 tokens > 600")


def test_without_a_renderer_the_estimate_is_labelled():
    a = attempt(distinct(50))
    (drop,) = LengthFilter(LengthConfig(max_tokens=10)).run([a]).drops
    assert drop.detail.startswith("about ")


def test_the_estimate_counts_assistant_tokens_apart():
    counts = approx_token_counts(attempt(distinct(5)).trajectory)
    assert 0 < counts.assistant < counts.total
    assert 0 < counts.assistant_share < 1
    assert TokenCounts.from_mask([0, 0, 1, 1]) == TokenCounts(total=4, assistant=2)
