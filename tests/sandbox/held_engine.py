"""The real Docker engine behind a socket that can hold back one kind of answer.

A byte-for-byte forwarder on a Unix socket of its own, in a thread of its own (the client's
first ping blocks the thread that makes it). The engine's answer to the first
create (`hold="create"`) or start (`hold="start"`) of a container whose labels hold `marker` is
kept back until `release()`: the engine has done the work, and the caller has no answer yet. That is the
moment a cancelled caller used to lose what the engine made.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from pathlib import Path

ENGINE = "/var/run/docker.sock"


class HeldEngine:
    def __init__(self, folder: Path, hold: str, marker: str):
        self.path = str(folder / "engine.sock")
        self.hold = hold
        self.marker = marker.encode()
        self.created: list[bytes] = []
        """Ids of the marked containers the engine created."""
        self.sent = threading.Event()
        """The held request reached the engine."""
        self._go = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"unix://{self.path}"

    def __enter__(self) -> HeldEngine:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        asyncio.run_coroutine_threadsafe(self._shut(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _shut(self) -> None:
        self._server.close()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def release(self) -> None:
        self._go.set()

    def _held(self, request: bytes, marked_create: bool) -> bool:
        if self.hold == "create":
            return marked_create
        return any(re.match(rb"POST /[^ ]*/containers/" + made + rb"/start ", request) for made in self.created)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_unix_server(self._connection, self.path))
        self._ready.set()
        self._loop.run_forever()

    async def _connection(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        engine_reader, engine_writer = await asyncio.open_unix_connection(ENGINE)
        holding = asyncio.Event()  # the held request went out on this connection: its answer waits
        marked_create = False  # the last request on this connection created a marked container

        async def requests() -> None:
            nonlocal marked_create
            request = b""
            while data := await client_reader.read(65536):
                request = data if re.match(rb"[A-Z]+ /", data) else request + data
                marked_create = b"/containers/create" in request and self.marker in request
                if not self.sent.is_set() and self._held(request, marked_create):
                    holding.set()
                    self.sent.set()
                engine_writer.write(data)
                await engine_writer.drain()
            if engine_writer.can_write_eof():
                engine_writer.write_eof()

        async def answers() -> None:
            while data := await engine_reader.read(65536):
                if marked_create and (made := re.search(rb'"Id":"([0-9a-f]{64})"', data)):
                    self.created.append(made.group(1))
                if holding.is_set():
                    await asyncio.to_thread(self._go.wait)
                client_writer.write(data)
                await client_writer.drain()
            client_writer.close()  # the engine ended the stream (an exec's output): so does its reader

        with contextlib.suppress(ConnectionError, asyncio.CancelledError):
            await asyncio.gather(requests(), answers())
        for writer in (client_writer, engine_writer):
            writer.close()
