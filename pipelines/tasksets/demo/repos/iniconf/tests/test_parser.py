import textwrap

import pytest

import iniconf
from iniconf import ConfigError, ParseError

SAMPLE = textwrap.dedent(
    """\
    # Service settings
    ; written by hand

    [server]
    host = example.org
    Port = 8080          # the public port
    debug: off
    timeout = 2.5 ; seconds

    [paths]
    root = /opt/app
    logs = "/var/log/app #old"
    """
)


def test_sections_and_keys():
    config = iniconf.loads(SAMPLE)
    assert config.sections() == ["server", "paths"]
    assert config.keys("server") == ["host", "port", "debug", "timeout"]


def test_typed_values_and_inline_comments():
    server = iniconf.loads(SAMPLE)["server"]
    assert dict(server) == {"host": "example.org", "port": 8080, "debug": False, "timeout": 2.5}


def test_keys_are_case_insensitive():
    config = iniconf.loads(SAMPLE)
    assert config.get("server", "PORT") == 8080
    assert "HOST" in config["server"]


def test_section_names_are_case_sensitive():
    config = iniconf.loads("[Server]\na = 1\n[server]\na = 2\n")
    assert config.get("Server", "a") == 1
    assert config.get("server", "a") == 2


def test_comment_marker_inside_quotes_is_kept():
    config = iniconf.loads(SAMPLE)
    assert config.get("paths", "logs") == "/var/log/app #old"


def test_comment_marker_inside_literal_string_is_kept():
    config = iniconf.loads("[paths]\nlogs = '/var/log/app ;old'   ; rotated weekly\n")
    assert config.get("paths", "logs") == "/var/log/app ;old"


def test_literal_string_with_hash_and_trailing_comment():
    config = iniconf.loads("[db]\nurl = 'sqlite:///tmp/#1.db'  # scratch database\n")
    assert config.get("db", "url") == "sqlite:///tmp/#1.db"


def test_marker_without_blank_before_is_not_a_comment():
    config = iniconf.loads("[style]\ncolor = #ff8800\nsep = a;b\n")
    assert config.get("style", "color") == "#ff8800"
    assert config.get("style", "sep") == "a;b"


def test_continuation_lines():
    text = "[motd]\nbanner = Welcome\n    to the machine\n\tenjoy\nafter = 1\n"
    config = iniconf.loads(text)
    assert config.get("motd", "banner") == "Welcome\nto the machine\nenjoy"
    assert config.get("motd", "after") == 1


def test_multiline_list_with_comments():
    text = "[pool]\nhosts = [\n    alpha,      # primary\n    # beta is retired\n    gamma,\n    ]\n"
    assert iniconf.loads(text).get("pool", "hosts") == ["alpha", "gamma"]


def test_blank_line_ends_a_value():
    with pytest.raises(ParseError) as info:
        iniconf.loads("[a]\nx = 1\n\n    stray\n")
    assert info.value.lineno == 4


@pytest.mark.parametrize(
    ("text", "lineno", "message"),
    [
        pytest.param("[a]\nx = 1\ny\n", 3, "expected 'key = value'", id="no-separator"),
        pytest.param("x = 1\n[a]\n", 1, "outside of any section", id="key-before-section"),
        pytest.param("[a]\nx = 1\n[b]\n[a]\n", 4, "duplicate section (first on line 1)", id="duplicate-section"),
        pytest.param("[a]\nX = 1\n\nx = 2\n", 4, "duplicate key (first on line 2)", id="duplicate-key"),
        pytest.param("[bad:name]\n", 1, "bad section name", id="bad-section-name"),
    ],
)
def test_parse_errors(text, lineno, message):
    with pytest.raises(ParseError) as info:
        iniconf.loads(text)
    assert info.value.lineno == lineno
    assert message in str(info.value)


def test_malformed_value_is_reported_at_load_with_its_line():
    text = '[a]\nok = 1\n\nname = "unterminated\n'
    with pytest.raises(ParseError) as info:
        iniconf.loads(text)
    assert info.value.lineno == 4
    assert info.value.line == 'name = "unterminated'
    assert str(info.value).startswith("<string>, line 4: unterminated string")


def test_malformed_value_error_quotes_its_line():
    text = "[a]\nxs = [1, 2\nafter = 3\n"
    with pytest.raises(ParseError) as info:
        iniconf.loads(text)
    assert (info.value.lineno, info.value.line) == (2, "xs = [1, 2")


def test_parse_errors_are_config_errors():
    with pytest.raises(ConfigError):
        iniconf.loads("[a\n")


def test_load_names_the_file(tmp_path):
    path = tmp_path / "app.ini"
    path.write_text("[a]\nx = 1\noops\n", encoding="utf-8")
    with pytest.raises(ParseError) as info:
        iniconf.load(path)
    assert str(info.value).startswith(f"{path}, line 3:")


def test_load_reads_utf8(tmp_path):
    path = tmp_path / "app.ini"
    path.write_text("[greeting]\ntext = Grüß Gott\n", encoding="utf-8")
    assert iniconf.load(path).get("greeting", "text") == "Grüß Gott"
