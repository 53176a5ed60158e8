"""Bounded capture of command output: the head and the tail survive, the middle is counted."""

from __future__ import annotations

FLOOD_FACTOR = 100  # past limit * this many bytes, the command is killed rather than drained


class OutputBuffer:
    def __init__(self, limit: int):
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.notes: list[str] = []

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[: max(0, len(self.tail) - self.limit // 2)]

    def note(self, text: str) -> None:
        self.notes.append(text)

    @property
    def cut(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    @property
    def flooded(self) -> bool:
        return self.total > self.limit * FLOOD_FACTOR

    def text(self) -> str:
        # bytes that are not UTF-8 become U+FFFD: every record must stay valid JSON text
        head = self.head.decode(errors="replace")
        tail = self.tail.decode(errors="replace")
        parts = [head]
        if self.cut:
            parts.append(f"\n[... {self.cut} bytes of output cut ...]\n")
        parts.append(tail)
        parts.extend(f"\n{n}" for n in self.notes)
        return "".join(parts)
