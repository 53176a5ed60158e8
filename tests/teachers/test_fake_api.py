"""The stand-in server itself, spoken to with plain urllib."""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.teachers.fake_api import (
    FakeAPI,
    anthropic_message,
    dropped,
    overloaded,
    rate_limited,
    slow,
)


def post(url: str, body: object, timeout: float = 5) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


def test_answers_in_order_and_records_requests(fake_api):
    fake_api.anthropic(rate_limited(retry_after=2), overloaded(), anthropic_message("hi"))
    url = fake_api.anthropic_url + "/v1/messages"

    status, headers, body = post(url, {"n": 1})
    assert (status, headers["retry-after"], body["error"]["type"]) == (429, "2", "rate_limit_error")
    status, _, body = post(url, {"n": 2})
    assert (status, body) == (
        529,
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )
    status, _, body = post(url, {"n": 3})
    assert status == 200 and body["content"] == [{"type": "text", "text": "hi"}]
    assert [r.body for r in fake_api.requests] == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert fake_api.pending("/v1/messages") == 0


def test_openai_errors_have_the_openai_shape(fake_api):
    fake_api.openai(overloaded())
    status, _, body = post(fake_api.openai_url + "/chat/completions", {})

    assert status == 529
    assert body["error"]["message"] == "Overloaded" and body["error"]["type"] == "overloaded_error"


def test_running_out_of_script_is_a_clear_400(fake_api):
    status, _, body = post(fake_api.openai_url + "/chat/completions", {})

    assert status == 400
    assert "no scripted reply left for POST /v1/chat/completions" in body["error"]["message"]


def test_unknown_routes_are_404(fake_api):
    assert post(fake_api.anthropic_url + "/v1/complete", {})[0] == 404


def test_dropped_connection_sends_nothing(fake_api):
    fake_api.anthropic(dropped())
    connection = http.client.HTTPConnection("127.0.0.1", fake_api.port, timeout=5)
    connection.request(
        "POST", "/v1/messages", body=b"{}", headers={"content-type": "application/json"}
    )
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        connection.getresponse()


def test_only_loopback_and_a_bounded_record(fake_api):
    small = FakeAPI(max_requests=2).start()
    try:
        for _ in range(3):
            post(small.anthropic_url + "/v1/messages", {})
        assert len(small.requests) == 2
    finally:
        small.close()
    assert fake_api.anthropic_url.startswith("http://127.0.0.1:")


def test_closing_does_not_wait_for_a_slow_reply():
    api = FakeAPI().start()
    api.anthropic(slow(30, anthropic_message("late")))

    got: list[object] = []

    def call() -> None:
        with contextlib.suppress(OSError, http.client.HTTPException):
            got.append(post(api.anthropic_url + "/v1/messages", {}, timeout=60))

    client = threading.Thread(target=call, daemon=True)
    client.start()
    while not api.requests:
        time.sleep(0.01)
    api.close()
    client.join(timeout=60)  # a guard against a hang only: the client is let go long before the reply

    assert not client.is_alive() and "late" not in repr(got)  # the slow reply was never sent


def test_the_stand_in_lives_with_the_tests_not_in_the_installed_package():
    import factory

    package = Path(factory.__file__).parent
    assert not [p for p in package.rglob("*.py") if "fake" in p.name], "a test stand-in ships with factory"
