"""Teacher calls of attempts that run on other nodes, made on the driver's node.

The `TeacherGateway` actor is pinned to the node of the process that holds the run, so the
journal (`factory.executor.journal`) is written into the run folder exactly as a local run writes it:
an intent before each paid request, its completion after, both fsynced. A node that dies
mid-attempt loses no paid turn, and a driver killed with kill -9 leaves the same journal a
local run leaves. One gateway holds one teacher object per label, so each teacher's rate
limiter (`factory.teachers.limits`) holds across the cluster, and API keys never leave this node.

    worker node: run_agent ⇄ GatewayTeacher ──(Ray call)──► TeacherGateway: JournalTeacher ⇄ API
"""

from __future__ import annotations

import asyncio
import pickle
from pathlib import Path
from typing import Any

from factory.executor.journal import JournalTeacher
from factory.protocols import Teacher
from factory.records import Completion, Message, PossiblyBilled, Task


class TeacherGateway:
    """Runs as a Ray actor; sessions are the attempts in flight, by id."""

    def __init__(self, teachers: dict[str, Any]):
        from factory.teachers import build_teacher

        self.teachers: dict[str, Teacher] = {label: build_teacher(config) for label, config in teachers.items()}
        self.opened: dict[str, Teacher] = {}  # what the attempt opened with (its journal's possibly_billed)
        self.talking: dict[str, Teacher] = {}  # what it talks to (a scripted teacher's session)
        self.calls: dict[str, set[asyncio.Task]] = {}

    async def open(self, sid: str, label: str, journal: str | None) -> None:
        await self.close(sid)  # a try of this attempt before, on a node that died: its calls end now
        teacher = self.teachers[label]
        self.opened[sid] = self.talking[sid] = JournalTeacher(teacher, Path(journal)) if journal else teacher
        self.calls[sid] = set()

    async def complete(self, sid: str, messages: list[Message], tools: list[dict[str, Any]],
                       session: tuple[Task, int] | None = None) -> Completion | BaseException:
        """The completion, or the exception the teacher raised (returned, so that the caller
        raises it as the local loop would see it, with no Ray traceback around it)."""
        if session is not None:
            opener = getattr(self.talking[sid], "session", None)
            if callable(opener):
                self.talking[sid] = opener(*session)
        call = asyncio.ensure_future(self.talking[sid].complete(messages, tools))
        self.calls[sid].add(call)
        try:
            return await call
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return _portable(exc)
        finally:
            self.calls.get(sid, set()).discard(call)

    async def cancel(self, sid: str) -> None:
        """The attempt stopped waiting (its wall limit, a cancel): its request in flight ends, and
        stays in the journal as possibly billed."""
        calls = self.calls.get(sid, set())
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)

    async def close(self, sid: str) -> list[PossiblyBilled]:
        """End an attempt's session; the paid requests of it that were cut off in flight."""
        await self.cancel(sid)
        self.calls.pop(sid, None)
        self.talking.pop(sid, None)
        opened = self.opened.pop(sid, None)
        return list(opened.possibly_billed) if isinstance(opened, JournalTeacher) else []

    async def aclose(self) -> None:
        for teacher in self.teachers.values():
            close = getattr(teacher, "aclose", None)
            if close is not None:
                await close()


def _portable(exc: Exception) -> BaseException:
    try:
        pickle.dumps(exc)
        return exc
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")


class GatewayTeacher:
    """The teacher as an attempt on a worker node sees it: every call goes to the gateway."""

    def __init__(self, gateway: Any, sid: str, name: str, model: str, scripted: bool):
        self.gateway, self.sid = gateway, sid
        self.name, self.model, self.scripted = name, model, scripted
        self._session: tuple[Task, int] | None = None

    def session(self, task: Task, seed: int) -> GatewayTeacher:
        self._session = (task, seed)  # sent with the first call: a session is opened on the gateway
        return self

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion:
        session, self._session = self._session, None
        try:
            answer = await self.gateway.complete.remote(self.sid, messages, tools, session)
        except asyncio.CancelledError:
            self.gateway.cancel.remote(self.sid)
            raise
        if isinstance(answer, BaseException):
            raise answer
        return answer
