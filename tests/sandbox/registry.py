"""A real registry server on loopback (Debian's `docker-registry`), and a rate-limiting front for it.

The engine pulls from `127.0.0.1:<port>` over plain HTTP: Docker treats 127.0.0.0/8 as an
insecure registry by default, so nothing in the engine's configuration changes.
"""

from __future__ import annotations

import http.client
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REGISTRY = "/usr/bin/docker-registry"
TOO_MANY = b'{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your pull rate limit"}]}'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def registry_server(folder: Path) -> Iterator[str]:
    """A registry storing under `folder`; yields its address, `127.0.0.1:<port>`."""
    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.yml"
    config.write_text(f"""\
version: 0.1
log: {{level: warn}}
storage:
  filesystem: {{rootdirectory: {folder / "data"}}}
  delete: {{enabled: true}}
http: {{addr: "127.0.0.1:{port}"}}
""")
    with open(folder / "registry.log", "wb") as log:
        proc = subprocess.Popen([REGISTRY, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the registry did not start: {(folder / 'registry.log').read_text()[-2000:]}") from None
                time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


class RateLimited:
    """A front for a registry that answers the first `refusals` manifest requests with HTTP 429,
    as a public registry's pull rate limit does, and passes everything else through."""

    def __init__(self, upstream: str, refusals: int):
        self.upstream = upstream
        self.left = refusals
        self.refused = 0
        self.lock = threading.Lock()
        front = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self._pass()

            def do_HEAD(self):
                self._pass()

            def _pass(self):
                if "/manifests/" in self.path and front._refuse():
                    self.send_response(429)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(TOO_MANY)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(TOO_MANY)
                    return
                host, port = front.upstream.split(":")
                conn = http.client.HTTPConnection(host, int(port), timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                conn.request(self.command, self.path, headers=headers)
                answer = conn.getresponse()
                body = answer.read()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)
                conn.close()

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.address = f"127.0.0.1:{self.server.server_address[1]}"

    def _refuse(self) -> bool:
        with self.lock:
            if self.left <= 0:
                return False
            self.left -= 1
            self.refused += 1
            return True

    def __enter__(self) -> RateLimited:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
