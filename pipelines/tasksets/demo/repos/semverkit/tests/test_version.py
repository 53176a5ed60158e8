import random

import pytest

from semverkit import InvalidVersion, SemverError, Version, compare


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("1.2.3", (1, 2, 3, (), ()), id="plain"),
        pytest.param("v1.2.3", (1, 2, 3, (), ()), id="v-prefix"),
        pytest.param("  10.20.30\n", (10, 20, 30, (), ()), id="blanks"),
        pytest.param("1.0.0-alpha.1", (1, 0, 0, ("alpha", 1), ()), id="prerelease"),
        pytest.param("1.0.0+20130313144700", (1, 0, 0, (), ("20130313144700",)), id="build"),
        pytest.param(
            "1.0.0-beta+exp.sha.5114f85",
            (1, 0, 0, ("beta",), ("exp", "sha", "5114f85")),
            id="prerelease-and-build",
        ),
        pytest.param("1.0.0-x-y.0", (1, 0, 0, ("x-y", 0), ()), id="hyphen-in-identifier"),
    ],
)
def test_parse_valid(text, expected):
    v = Version.parse(text)
    assert (v.major, v.minor, v.patch, v.prerelease, v.build) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("1.2", id="two-parts"),
        pytest.param("1.2.3.4", id="four-parts"),
        pytest.param("01.2.3", id="leading-zero-major"),
        pytest.param("1.02.3", id="leading-zero-minor"),
        pytest.param("1.2.3-", id="empty-prerelease"),
        pytest.param("1.2.3-rc..1", id="empty-identifier"),
        pytest.param("1.2.3-01", id="leading-zero-prerelease"),
        pytest.param("1.2.3+", id="empty-build"),
        pytest.param("one.two.three", id="words"),
        pytest.param("", id="empty"),
    ],
)
def test_parse_invalid(text):
    with pytest.raises(InvalidVersion):
        Version.parse(text)


def test_errors_are_value_errors():
    with pytest.raises(ValueError):
        Version.parse("1.2")
    assert issubclass(InvalidVersion, SemverError)


def test_parse_rejects_non_strings():
    with pytest.raises(TypeError):
        Version.parse(1.2)


def test_str_round_trips():
    for text in ["0.0.0", "1.0.0-alpha.beta.1", "2.3.4+build.11", "3.0.0-rc.1+meta"]:
        assert str(Version.parse(text)) == text
    assert str(Version.parse("v1.2.3")) == "1.2.3"
    assert repr(Version.parse("1.2.3-rc.1")) == "Version('1.2.3-rc.1')"


def test_specification_precedence_example():
    ordered = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1",
        "1.1.0",
        "2.0.0",
    ]
    shuffled = ordered[:]
    random.Random(7).shuffle(shuffled)
    assert [str(v) for v in sorted(Version.parse(t) for t in shuffled)] == ordered


def test_numeric_identifiers_compare_as_numbers():
    assert Version.parse("1.0.0-rc.2") < Version.parse("1.0.0-rc.10")
    assert Version.parse("1.0.0-9") < Version.parse("1.0.0-10")


def test_numeric_identifiers_sort_before_alphanumeric():
    assert Version.parse("1.0.0-999") < Version.parse("1.0.0-alpha")
    assert Version.parse("1.0.0-rc.1") < Version.parse("1.0.0-rc.a")


def test_release_outranks_its_prereleases():
    assert Version.parse("1.0.0-rc.99") < Version.parse("1.0.0")
    assert Version.parse("1.0.0") < Version.parse("1.0.1-alpha")
    assert Version.parse("1.2.3").is_prerelease is False
    assert Version.parse("1.2.3-0").is_prerelease is True


def test_build_metadata_is_ignored_for_precedence():
    a, b = Version.parse("1.0.0+linux"), Version.parse("1.0.0+darwin.2")
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b, Version.parse("1.0.0")}) == 1
    assert a.build != b.build


def test_compare_returns_a_sign():
    assert compare("1.2.3", "1.2.4") == -1
    assert compare(Version.parse("2.0.0"), "1.99.99") == 1
    assert compare("1.2.3+a", "v1.2.3") == 0


def test_versions_do_not_equal_strings():
    assert Version.parse("1.2.3") != "1.2.3"


@pytest.mark.parametrize(
    ("start", "part", "label", "expected"),
    [
        pytest.param("1.2.3", "major", "", "2.0.0", id="major"),
        pytest.param("1.2.3", "minor", "", "1.3.0", id="minor"),
        pytest.param("1.2.3", "patch", "", "1.2.4", id="patch"),
        pytest.param("2.0.0-rc.1", "major", "", "2.0.0", id="major-of-major-prerelease"),
        pytest.param("1.2.0-rc.1", "major", "", "2.0.0", id="major-of-minor-prerelease"),
        pytest.param("1.3.0-rc.1", "minor", "", "1.3.0", id="minor-of-minor-prerelease"),
        pytest.param("1.2.3-rc.1", "minor", "", "1.3.0", id="minor-of-patch-prerelease"),
        pytest.param("1.2.3-rc.1", "patch", "", "1.2.3", id="patch-of-prerelease"),
        pytest.param("1.2.3", "prerelease", "", "1.2.4-0", id="prerelease-of-release"),
        pytest.param("1.2.4-rc.1", "prerelease", "", "1.2.4-rc.2", id="prerelease-increment"),
        pytest.param("1.2.4-rc", "prerelease", "", "1.2.4-rc.0", id="prerelease-append"),
        pytest.param("1.2.3", "prerelease", "rc", "1.2.4-rc.0", id="prerelease-label"),
        pytest.param("1.2.4-beta.3", "prerelease", "rc", "1.2.4-rc.0", id="prerelease-new-label"),
        pytest.param("1.2.4-rc.3", "prerelease", "rc", "1.2.4-rc.4", id="prerelease-same-label"),
    ],
)
def test_bump(start, part, label, expected):
    assert str(Version.parse(start).bump(part, label)) == expected


def test_bump_drops_build_metadata():
    assert str(Version.parse("1.2.3+build.5").bump("patch")) == "1.2.4"


def test_bump_unknown_part():
    with pytest.raises(ValueError, match="unknown version part"):
        Version.parse("1.2.3").bump("micro")
