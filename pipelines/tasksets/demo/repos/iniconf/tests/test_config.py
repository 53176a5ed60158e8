import textwrap

import pytest

import iniconf
from iniconf import Config, ConfigError, ConversionError, InterpolationError, MissingError

APP = textwrap.dedent(
    """\
    [app]
    name = shop
    workers = 4
    ratio = 0.75
    verbose = yes
    tags = [web, "blue green"]
    timeout = 1h30m
    retry_after = 45
    single = solo

    [urls]
    host = ${app:name}.example.org
    Base = https://${host}/
    api = ${base}api/v${app:workers}
    price = "$$5 flat"
    """
)


@pytest.fixture
def config():
    return iniconf.loads(APP)


def test_get_with_default(config):
    assert config.get("app", "missing", None) is None
    assert config.get("nowhere", "x", 3) == 3


def test_missing_key_and_section(config):
    with pytest.raises(MissingError, match="no key 'missing' in section"):
        config.get("app", "missing")
    with pytest.raises(MissingError, match=r"no section \[nowhere\]"):
        config["nowhere"]
    assert issubclass(MissingError, KeyError)
    assert config["app"].get("missing", "fallback") == "fallback"


def test_typed_getters(config):
    assert config.get_str("app", "name") == "shop"
    assert config.get_int("app", "workers") == 4
    assert config.get_float("app", "workers") == 4.0
    assert config.get_float("app", "ratio") == 0.75
    assert config.get_bool("app", "verbose") is True
    assert config.get_list("app", "tags") == ["web", "blue green"]
    assert config.get_list("app", "single") == ["solo"]


def test_typed_getter_defaults(config):
    assert config.get_int("app", "threads", 8) == 8
    assert config.get_bool("flags", "beta", False) is False


@pytest.mark.parametrize(
    ("getter", "key"),
    [
        pytest.param("get_int", "ratio", id="int-from-float"),
        pytest.param("get_int", "name", id="int-from-text"),
        pytest.param("get_int", "verbose", id="int-from-bool"),
        pytest.param("get_float", "verbose", id="float-from-bool"),
        pytest.param("get_bool", "workers", id="bool-from-int"),
        pytest.param("get_str", "workers", id="str-from-int"),
    ],
)
def test_typed_getter_refuses_other_types(config, getter, key):
    with pytest.raises(ConversionError):
        getattr(config, getter)("app", key)


def test_conversion_error_is_value_error(config):
    with pytest.raises(ValueError, match=r"\[app\] name = 'shop' is not an integer"):
        config.get_int("app", "name")


def test_durations(config):
    assert config.get_duration("app", "timeout") == 5400.0
    assert config.get_duration("app", "retry_after") == 45.0
    assert config.get_duration("app", "grace", 1.5) == 1.5


def test_duration_with_missing_unit_is_refused():
    config = iniconf.loads("[job]\ntimeout = 1h30\n")
    with pytest.raises(ConversionError, match="is not a duration"):
        config.get_duration("job", "timeout")


def test_interpolation(config):
    assert config.get("urls", "host") == "shop.example.org"
    assert config.get("urls", "base") == "https://shop.example.org/"
    assert config.get("urls", "api") == "https://shop.example.org/api/v4"


def test_interpolated_value_takes_its_own_type():
    config = iniconf.loads("[a]\nport = 80\nalt = ${port}80\non = ${b:flag}\n[b]\nflag = on\n")
    assert config.get("a", "alt") == 8080
    assert config.get("a", "on") is True


def test_dollar_escape(config):
    assert config.get("urls", "price") == "$5 flat"


def test_literal_strings_are_not_interpolated():
    config = iniconf.loads("[a]\nx = 1\ny = '${x}'\n")
    assert config.get("a", "y") == "${x}"


def test_unknown_reference():
    config = iniconf.loads("[a]\nx = ${nowhere:y}\n")
    with pytest.raises(InterpolationError, match=r"a:x refers to \$\{nowhere:y\}, which does not exist"):
        config.get("a", "x")


def test_circular_reference():
    config = iniconf.loads("[a]\nx = ${y}\ny = ${b:z}\n[b]\nz = ${a:x}\n")
    with pytest.raises(InterpolationError, match="circular reference: a:x -> a:y -> b:z -> a:x"):
        config.get("a", "x")


def test_list_cannot_be_spliced():
    config = iniconf.loads("[a]\nxs = [1, 2]\ny = items ${xs}\n")
    with pytest.raises(ConfigError):
        config.get("a", "y")


def test_set_updates_dependent_references(config):
    assert config.get("urls", "api") == "https://shop.example.org/api/v4"
    config.set("app", "name", "store")
    config.set("app", "workers", 2)
    assert config.get("urls", "host") == "store.example.org"
    assert config.get("urls", "api") == "https://store.example.org/api/v2"


def test_remove_updates_dependent_references(config):
    assert config.get("urls", "host") == "shop.example.org"
    config.remove("app", "name")
    with pytest.raises(InterpolationError):
        config.get("urls", "host")


def test_remove_section_and_missing_key(config):
    config.remove("urls")
    assert config.sections() == ["app"]
    with pytest.raises(MissingError):
        config.remove("app", "nothing")


def test_returned_lists_are_copies(config):
    tags = config.get_list("app", "tags")
    tags.append("extra")
    assert config.get("app", "tags") == ["web", "blue green"]
    config.to_dict()["app"]["tags"].clear()
    assert config["app"]["tags"] == ["web", "blue green"]


def test_section_view(config):
    app = config["app"]
    assert len(app) == 8
    assert list(app)[:3] == ["name", "workers", "ratio"]
    assert "WORKERS" in app and "threads" not in app
    assert repr(config["urls"]).startswith("<Section [urls]")


def test_round_trip_through_text(config):
    config.set("extra", "note", 'say "hi"; then # leave')
    config.set("extra", "lines", "one\ntwo")
    config.set("extra", "cost", "$3")
    again = iniconf.loads(iniconf.dumps(config))
    assert again.to_dict() == config.to_dict()
    assert again.get("extra", "cost") == "$3"


def test_from_dict_and_dumps():
    config = Config.from_dict({"a": {"n": 1, "flag": False, "xs": ["p q", 2]}, "empty": {}})
    assert config.dumps() == '[a]\nn = 1\nflag = false\nxs = [p q, 2]\n\n[empty]\n'
