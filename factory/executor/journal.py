"""No API dollar paid twice, and none paid unseen: teacher calls are journaled while an attempt runs.

An attempt killed mid-way (kill -9, power loss) is redone on resume. Its journal holds the
completions already paid for; the redo replays them in order, so the agent loop re-runs the
same tool calls in a fresh sandbox, and only turns past the journal reach the API again.

Each call is journaled twice, each line fsynced: an intent before the request is sent, with the
most it can cost, then its outcome. An intent with no outcome after it was cut off in flight
(the process killed, or the call cancelled by a timeout or a second Ctrl-C): the provider may
have billed it, so the attempt's trajectory carries it as `possibly_billed`.

    {"intent": {"turn": 2, "max_input_tokens": 19211, "max_output_tokens": 8192, "max_cost_usd": 0.104}}
    {"message": {...}, "usage": {...}, "cost_usd": 0.0213, ...}     the completion (replayed on a redo)
    {"failed": 2}                                                   the call ended in an error

Paid teachers only: the offline scripted teacher costs nothing and keeps its own state.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from factory.errors import StorageError
from factory.protocols import Teacher
from factory.records import Completion, Message, PossiblyBilled, Task
from factory.teachers.prices import price_of

FRAMING_TOKENS = 1024
"""Input a provider adds around what we send (role markers, its tool-use system prompt)."""


class JournalTeacher:
    def __init__(self, inner: Teacher, path: Path):
        self.inner = inner
        self.path = path
        self.name, self.model = inner.name, inner.model
        self.scripted = getattr(inner, "scripted", False)
        scrub = getattr(inner, "scrub", None)
        if scrub is not None:
            self.scrub = scrub
        settings = getattr(inner, "config", None)  # an API teacher's settings: price and max_tokens
        self.price = price_of(settings) if settings is not None else None
        self.max_tokens: int | None = getattr(settings, "max_tokens", None)
        self.pending, self.possibly_billed = load(path)
        """Completions to replay; requests cut off in flight, earlier ones and this one's own."""
        self.replayed = 0
        self.calls = 0

    def session(self, task: Task, seed: int) -> JournalTeacher:
        start = getattr(self.inner, "session", None)
        if start is None:
            return self
        child = JournalTeacher(start(task, seed), self.path)
        self.possibly_billed = child.possibly_billed  # one list: the caller reads it here
        return child

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion:
        turn, self.calls = self.calls, self.calls + 1
        if self.pending:
            self.replayed += 1
            return self.pending.pop(0)
        intent = self.bound(turn, messages, tools)
        self._append(json.dumps({"intent": intent.model_dump()}))  # before a cent can be spent
        try:
            completion = await self.inner.complete(messages, tools)
        except Exception:
            self._append(json.dumps({"failed": turn}))
            raise
        except BaseException:  # cancelled in flight: the request may have reached the API
            self.possibly_billed.append(intent)
            raise
        self._append(completion.model_dump_json())
        return completion

    def bound(self, turn: int, messages: list[Message], tools: list[dict[str, Any]]) -> PossiblyBilled:
        """The most a request can cost: one input token per byte sent (a token is at least one
        byte) plus the provider's framing, at the dearest input rate; output up to `max_tokens`."""
        sent = json.dumps([m.model_dump(mode="json") for m in messages] + tools, ensure_ascii=False)
        input_tokens = len(sent.encode()) + FRAMING_TOKENS
        cost = None
        if self.price is not None and self.max_tokens is not None:
            cost = self.price.most(input_tokens=input_tokens, output_tokens=self.max_tokens)
        return PossiblyBilled(turn=turn, max_input_tokens=input_tokens, max_output_tokens=self.max_tokens,
                              max_cost_usd=cost)

    def _append(self, line: str) -> None:
        """One fsynced line; a journal that cannot be written stops the run (`StorageError`)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as fh:
                fh.write(line + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise StorageError.writing(self.path, exc, then="resume the run") from None


def load(path: Path) -> tuple[list[Completion], list[PossiblyBilled]]:
    """A journal's completions, in order, and its intents that no outcome followed.

    Journals written before intents were (completions only) load as they did. A last line that
    a kill cut short is cut off the file, so the next line starts on a line of its own.
    """
    if not path.exists():
        return [], []
    data = path.read_bytes()
    whole = data[: data.rfind(b"\n") + 1]
    if len(whole) < len(data):
        os.truncate(path, len(whole))
    completions: list[Completion] = []
    cut_off: list[PossiblyBilled] = []
    open_intent: PossiblyBilled | None = None
    for line in whole.decode().splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        if open_intent is not None:  # a call's outcome comes right after its intent, or never
            if "intent" in entry:
                cut_off.append(open_intent)
            open_intent = None
        if "intent" in entry:
            open_intent = PossiblyBilled.model_validate(entry["intent"])
        elif "failed" not in entry:
            completions.append(Completion.model_validate(entry))
    if open_intent is not None:
        cut_off.append(open_intent)
    return completions, cut_off
