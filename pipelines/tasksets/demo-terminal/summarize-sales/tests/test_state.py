import json


def test_totals_per_region():
    summary = json.load(open("/app/out/summary.json"))
    assert summary == {"north": 20.0, "south": 7.0, "east": 10.0}
