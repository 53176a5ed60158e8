import json


def test_settings_parse_and_keep_every_setting():
    settings = json.load(open("/app/settings.json"))
    assert settings == {"name": "orders", "port": 8125, "workers": 4, "debug": False, "tags": ["a", "b"]}
