import pytest

from iniconf import format_value, parse_duration, parse_value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("8080", 8080, id="int"),
        pytest.param("-1_000", -1000, id="int-underscores"),
        pytest.param("0x1F", 31, id="hex"),
        pytest.param("0o17", 15, id="octal"),
        pytest.param("0b101", 5, id="binary"),
        pytest.param("2.5", 2.5, id="float"),
        pytest.param("1e-3", 0.001, id="exponent"),
        pytest.param("0750", "0750", id="leading-zero-stays-text"),
        pytest.param("1.2.3", "1.2.3", id="dotted-text"),
        pytest.param("hello world", "hello world", id="bare-text"),
        pytest.param("", "", id="empty"),
    ],
)
def test_scalars(text, expected):
    value = parse_value(text)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize("word", ["true", "True", "YES", "on"])
def test_true_words(word):
    assert parse_value(word) is True


@pytest.mark.parametrize("word", ["false", "No", "OFF"])
def test_false_words(word):
    assert parse_value(word) is False


def test_double_quoted_escapes():
    assert parse_value(r'"tab\there \"quoted\" \u00e9\\"') == 'tab\there "quoted" \u00e9\\'


def test_quoted_numbers_stay_strings():
    assert parse_value('"8080"') == "8080"
    assert parse_value("'true'") == "true"


def test_single_quoted_is_literal():
    assert parse_value(r"'C:\temp\new'") == r"C:\temp\new"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('"open', id="unterminated"),
        pytest.param(r'"bad \q escape"', id="unknown-escape"),
        pytest.param('"a" b', id="text-after-quote"),
        pytest.param("[1, 2", id="unterminated-list"),
        pytest.param("[1, , 2]", id="empty-item"),
        pytest.param("[[1]]", id="nested-list"),
    ],
)
def test_malformed_values(text):
    with pytest.raises(ValueError):
        parse_value(text)


def test_lists():
    assert parse_value('[web, "blue, green", 3, 2.5, off,]') == ["web", "blue, green", 3, 2.5, False]
    assert parse_value("[]") == []


def test_list_items_with_escaped_quotes():
    assert parse_value(r'["say \"hi\"", "x,y"]') == ['say "hi"', "x,y"]


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("plain", id="bare"),
        pytest.param("8080", id="numeric-text"),
        pytest.param(" padded ", id="padded"),
        pytest.param('has "quotes"; and # marks', id="specials"),
        pytest.param("two\nlines", id="newline"),
        pytest.param(42, id="int"),
        pytest.param(-0.25, id="float"),
        pytest.param(True, id="bool"),
        pytest.param(["a b", 1, False], id="list"),
        pytest.param(["x, y", "[z]"], id="list-of-tricky-text"),
    ],
)
def test_format_round_trips(value):
    assert parse_value(format_value(value)) == value


def test_format_refuses_what_it_cannot_write():
    with pytest.raises(ValueError):
        format_value(float("nan"))
    with pytest.raises(TypeError):
        format_value({"a": 1})


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("90s", 90.0, id="seconds"),
        pytest.param("1h30m", 5400.0, id="hours-minutes"),
        pytest.param("250ms", 0.25, id="milliseconds"),
        pytest.param("1d 2h", 93600.0, id="spaced"),
        pytest.param("1.5m", 90.0, id="fractional"),
    ],
)
def test_durations(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("soon", id="word"),
        pytest.param("1h30", id="missing-unit"),
        pytest.param("10 parsecs", id="unknown-unit"),
        pytest.param("90s!", id="trailing-junk"),
    ],
)
def test_malformed_durations(text):
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)
