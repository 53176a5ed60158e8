from toy import parse_pair


def test_parse_pair():
    assert parse_pair("a=b") == ("a", "b")


def test_parse_pair_strips():
    assert parse_pair(" a = b ") == ("a", "b")
