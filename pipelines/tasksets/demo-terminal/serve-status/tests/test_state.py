import time
import urllib.request


def status() -> bytes:
    """The running service's answer; it may still be coming up."""
    for _ in range(30):
        try:
            return urllib.request.urlopen("http://127.0.0.1:8081/status", timeout=2).read()
        except OSError:
            time.sleep(0.2)
    raise AssertionError("nothing answers on 127.0.0.1:8081: the service is not running")


def test_the_running_service_answers_on_8081():
    assert status() == b"inventory: up"


def test_the_service_code_is_unchanged():
    assert "serve_forever" in open("/app/status/server.py").read()
