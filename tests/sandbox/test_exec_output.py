"""An exec's output is read whole, even when its first bytes arrive with the response's headers.

Under load the engine often writes the upgrade response and the first output frame in one
go. docker-py reads the headers through a buffered reader and then reads frames from the
raw socket under it, so those first bytes are never seen: a quick command (`id -un`, the
sandbox's ready line) came back empty with exit code 0. A local server that speaks the
engine's exec protocol sends exactly that, every time.
"""

from __future__ import annotations

import socket
import struct
import threading
from pathlib import Path

import docker
import pytest

from factory.sandbox.docker import engine

UPGRADE = (b"HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
           b"Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n")


def frame(data: bytes, stream: int = 1) -> bytes:
    return struct.pack(">BxxxL", stream, len(data)) + data


@pytest.fixture
def engine_that_answers_at_once(tmp_path: Path):
    """A unix socket that answers any exec start with the headers and `frames` in one write."""
    path = str(tmp_path / "engine.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    frames: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += conn.recv(65536)
                head, _, body = request.partition(b"\r\n\r\n")
                length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length")), b"0"))
                while len(body) < length:
                    body += conn.recv(65536)
                conn.sendall(UPGRADE + b"".join(frames))

    threading.Thread(target=serve, daemon=True).start()
    yield docker.APIClient(base_url=f"unix://{path}", version="1.41"), frames
    server.close()


def test_output_that_came_with_the_headers_is_kept(engine_that_answers_at_once):
    api, frames = engine_that_answers_at_once
    frames += [frame(b"agent\n"), frame(b"more ", 2), frame(b"x" * 70000)]
    assert b"".join(engine.exec_output(api, "some-exec", 5)) == b"agent\nmore " + b"x" * 70000


def test_docker_py_alone_loses_it(engine_that_answers_at_once):
    """Why `exec_output` exists: if this starts failing, docker-py reads the buffer itself now."""
    api, frames = engine_that_answers_at_once
    frames.append(frame(b"agent\n"))
    assert api.exec_start("some-exec") == b""


def test_a_frame_cut_short_ends_the_output(engine_that_answers_at_once):
    api, frames = engine_that_answers_at_once
    frames += [frame(b"whole"), frame(b"cut short")[:-3]]
    assert b"".join(engine.exec_output(api, "some-exec", 5)) == b"wholecut sh"
