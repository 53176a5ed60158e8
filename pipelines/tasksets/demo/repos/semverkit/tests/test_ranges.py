import pytest

from semverkit import (
    InvalidRange,
    InvalidVersion,
    Range,
    Version,
    max_satisfying,
    min_satisfying,
    satisfies,
)

RELEASES = ["0.9.0", "1.0.0", "1.2.3", "1.2.9", "1.3.0", "1.10.1", "2.0.0", "2.1.0", "3.0.0"]


@pytest.mark.parametrize(
    ("text", "expanded"),
    [
        pytest.param("^1.2.3", ">=1.2.3 <2.0.0-0", id="caret"),
        pytest.param("^0.2.3", ">=0.2.3 <0.3.0-0", id="caret-zero-major"),
        pytest.param("^0.0.3", ">=0.0.3 <0.0.4-0", id="caret-zero-minor"),
        pytest.param("^0.x", ">=0.0.0 <1.0.0-0", id="caret-zero-wildcard"),
        pytest.param("~1.2.3", ">=1.2.3 <1.3.0-0", id="tilde"),
        pytest.param("~1", ">=1.0.0 <2.0.0-0", id="tilde-major"),
        pytest.param("1.2.x", ">=1.2.0 <1.3.0-0", id="x-range"),
        pytest.param("1", ">=1.0.0 <2.0.0-0", id="bare-major"),
        pytest.param("*", ">=0.0.0", id="star"),
        pytest.param("", ">=0.0.0", id="empty"),
        pytest.param("1.2.3 - 2.3.4", ">=1.2.3 <=2.3.4", id="hyphen"),
        pytest.param("1.2 - 2.3.4", ">=1.2.0 <=2.3.4", id="hyphen-partial-low"),
        pytest.param("1.2.3 - 2.3", ">=1.2.3 <2.4.0-0", id="hyphen-partial-high"),
        pytest.param(">1.2", ">=1.3.0", id="greater-partial"),
        pytest.param("<=1.2", "<1.3.0-0", id="at-most-partial"),
        pytest.param("<1.2", "<1.2.0-0", id="less-partial"),
        pytest.param(">= 1.2.3  < 2", ">=1.2.3 <2.0.0-0", id="spaced-operators"),
        pytest.param("1.x || >=2.5.0", ">=1.0.0 <2.0.0-0 || >=2.5.0", id="or"),
        pytest.param("=1.2.3-rc.1", "1.2.3-rc.1", id="exact-prerelease"),
    ],
)
def test_expansion(text, expanded):
    assert str(Range(text)) == expanded


@pytest.mark.parametrize(
    ("text", "inside", "outside"),
    [
        pytest.param("^1.2.3", ["1.2.3", "1.9.9"], ["1.2.2", "2.0.0"], id="caret"),
        pytest.param("^0.2.3", ["0.2.3", "0.2.9"], ["0.3.0", "1.0.0"], id="caret-zero-major"),
        pytest.param("^0.0.3", ["0.0.3"], ["0.0.4", "0.1.0"], id="caret-zero-minor"),
        pytest.param("~1.2.3", ["1.2.3", "1.2.99"], ["1.3.0", "1.2.2"], id="tilde"),
        pytest.param("1.2.3 - 2.3", ["1.2.3", "2.3.7"], ["1.2.2", "2.4.0"], id="hyphen"),
        pytest.param("<1.0.0 || >=2.1.0", ["0.9.0", "2.1.0"], ["1.0.0", "2.0.0"], id="or"),
        pytest.param(">1.2.3 <=1.3.0", ["1.2.4", "1.3.0"], ["1.2.3", "1.3.1"], id="open-closed"),
    ],
)
def test_membership(text, inside, outside):
    range_ = Range(text)
    assert [v for v in inside if v not in range_] == []
    assert [v for v in outside if v in range_] == []


def test_contains_accepts_version_objects():
    assert Range("^1.2.3").contains(Version(1, 5, 0))
    assert satisfies("1.5.0", "^1.2.3")
    assert not satisfies("2.5.0", Range("^1.2.3"))


def test_contains_rejects_bad_versions():
    with pytest.raises(InvalidVersion):
        Range("^1.0.0").contains("1.0")


def test_prereleases_are_excluded_by_default():
    assert not Range("^1.2.0").contains("1.3.0-beta")
    assert not Range(">=1.0.0").contains("1.4.0-rc.1")
    assert not Range("~1.2.0").contains("1.2.5-rc.1")


def test_prerelease_named_in_range_allows_same_release():
    range_ = Range("^1.2.3-beta.2")
    assert range_.contains("1.2.3-beta.4")
    assert range_.contains("1.2.3")
    assert not range_.contains("1.2.3-beta.1")
    assert not range_.contains("1.2.4-beta.1")


def test_include_prerelease_flag():
    assert Range("^1.2.0").contains("1.3.0-beta", include_prerelease=True)
    assert satisfies("1.3.0-beta", ">=1.0.0", include_prerelease=True)


def test_upper_bound_excludes_next_prereleases():
    assert not Range("^1.2.3").contains("2.0.0-alpha", include_prerelease=True)
    assert not Range("1.x").contains("2.0.0-0", include_prerelease=True)


def test_wildcard_primitives():
    assert Range(">=*").contains("0.0.1")
    assert not Range("<*").contains("0.0.0")


def test_max_and_min_satisfying():
    assert max_satisfying(RELEASES, "^1.2.0") == Version(1, 10, 1)
    assert min_satisfying(RELEASES, "^1.2.0") == Version(1, 2, 3)
    assert max_satisfying(RELEASES, "~1.2.0") == Version(1, 2, 9)
    assert max_satisfying(RELEASES, ">=4.0.0") is None


def test_max_satisfying_skips_prereleases():
    candidates = [*RELEASES, "1.11.0-rc.1", "2.0.0-alpha"]
    assert max_satisfying(candidates, "^1.0.0") == Version(1, 10, 1)
    assert max_satisfying(candidates, "^1.0.0", include_prerelease=True) == Version.parse("1.11.0-rc.1")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("1.2.3.4", id="four-parts"),
        pytest.param("1..2", id="empty-part"),
        pytest.param("1.x.3", id="number-after-wildcard"),
        pytest.param("*.1", id="number-after-star"),
        pytest.param(">=", id="operator-alone"),
        pytest.param("1.x-beta", id="partial-prerelease"),
        pytest.param("^abc", id="word"),
        pytest.param("1.2.3 - ", id="dangling-hyphen"),
    ],
)
def test_invalid_range(text):
    with pytest.raises(InvalidRange):
        Range(text)


def test_leading_zero_in_range_is_invalid_range():
    with pytest.raises(InvalidRange) as info:
        Range(">=1.02.0")
    assert isinstance(info.value.__cause__, InvalidVersion)


def test_range_rejects_non_strings():
    with pytest.raises(TypeError):
        Range(["^1.0.0"])


def test_ranges_compare_by_meaning():
    assert Range("^1.2.3") == Range(">=1.2.3 <2.0.0-0")
    assert Range("1.2.x") == Range("~1.2")
    assert Range("^1.2.3") != Range("~1.2.3")
    assert len({Range("1.x"), Range("^1.0.0"), Range("~1")}) == 1
    assert repr(Range("~1")) == "Range('~1')"
