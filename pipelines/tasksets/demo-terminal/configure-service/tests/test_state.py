import subprocess
import time
import urllib.request


def test_the_service_answers_on_8080():
    server = subprocess.Popen(["python3", "/app/service/server.py"])
    try:
        for _ in range(50):
            try:
                body = urllib.request.urlopen("http://127.0.0.1:8080/health", timeout=2).read()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("nothing answers on 127.0.0.1:8080")
        assert body == b"ok from orders"
    finally:
        server.kill()
