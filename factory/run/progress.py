"""Progress of a run: a live display on a terminal, plain lines elsewhere, nothing with --quiet.

Shows done, sampling, verifying, queued, resolved (of verified), kept, cost spent and
projected, attempts per minute (over the latest finishes) and an ETA.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table


class Progress:
    """Counts attempts; subclasses decide how (and whether) to show them.

    One vocabulary with the summary, `factory show` and the card: an attempt is `sampling` (holding
    one of `max_in_flight` slots), then `verifying` (its slot already given to the next), then
    done with its outcome; `resolved` is out of the attempts verified. Counts continue across a
    resume: what the run finished before is counted at `start`."""

    WINDOW = 20
    """Finishes the attempts-per-minute rate is measured over: the run's pace now, not its start-up."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True, soft_wrap=True)
        self.total = self.done = self.resolved = self.verified = 0
        self._sampling: set[tuple] = set()
        self._verifying: set[tuple] = set()
        self.kept = 0
        self.spent = 0.0
        self.started = time.monotonic()
        self.done_at_start = 0
        self.finishes: deque[float] = deque(maxlen=self.WINDOW)

    def start(self, total: int, done: int, before: Iterable[Any] = (), kept: int = 0, spent: float = 0.0) -> None:
        """`before`: the attempts a resumed run finished earlier (their counts carry on)."""
        self.total, self.done, self.done_at_start = total, done, done
        for attempt in before:
            self._count(attempt)
        self.kept, self.spent = kept, spent
        self.started = time.monotonic()

    @property
    def sampling(self) -> int:
        return len(self._sampling)

    @property
    def verifying(self) -> int:
        return len(self._verifying)

    def launched(self, key: Any) -> None:
        self._sampling.add(_id(key))
        self.update()

    def sampled(self, key: Any) -> None:
        """Sampling ended: the slot is free, the attempt is verified next."""
        self._sampling.discard(_id(key))
        self._verifying.add(_id(key))
        self.update()

    def reverifying(self, key: Any) -> None:
        """An attempt of an earlier process, sampled already, is verified again."""
        self._verifying.add(_id(key))
        self.update()

    def ended(self, key: Any) -> None:
        """The attempt stopped unrecorded (cancelled, or its file could not be written)."""
        self._sampling.discard(_id(key))
        self._verifying.discard(_id(key))

    def finished(self, attempt: Any, scheduler: Any) -> None:
        self.ended(attempt.key)
        self.done += 1
        self.finishes.append(time.monotonic())
        self._count(attempt)
        self.kept = scheduler.result.kept
        self.spent = scheduler.result.spent_usd
        self.update(attempt)

    def _count(self, attempt: Any) -> None:
        if attempt.verdict is not None:
            self.verified += 1
            self.resolved += attempt.verdict.resolved

    def note(self, text: str) -> None:
        self.console.print(text)

    def update(self, attempt: Any = None) -> None:
        pass

    def stop(self) -> None:
        pass

    # ------------------------------------------------------------------ figures

    def rate_per_minute(self) -> float:
        """Attempts finished per minute over the last `WINDOW` finishes (0 before two)."""
        if len(self.finishes) < 2 or self.finishes[-1] <= self.finishes[0]:
            return 0.0
        return (len(self.finishes) - 1) / (self.finishes[-1] - self.finishes[0]) * 60

    def figures(self) -> dict[str, str]:
        rate = self.rate_per_minute()
        open_ = self.sampling + self.verifying
        queued = max(0, self.total - self.done - open_)
        new = self.done - self.done_at_start
        projected = self.spent / new * (new + queued + open_) if new else 0.0
        eta = (queued + open_) / rate * 60 if rate else None
        return {
            "done": f"{self.done}/{self.total}",
            "sampling": str(self.sampling),
            "verifying": str(self.verifying),
            "queued (at most)": str(queued),
            "resolved": (f"{self.resolved} of {self.verified} verified ({100 * self.resolved / self.verified:.0f}%)"
                         if self.verified else "-"),
            "kept so far": str(self.kept),
            "cost": f"${self.spent:.2f} (projected ${projected:.2f})",
            "attempts/min": f"{rate:.1f}" if rate else "-",
            "ETA": f"{eta / 60:.1f} min" if eta is not None else "-",
        }


def _id(key: Any) -> tuple:
    return (key.instance_id, key.teacher, key.index)


class PlainProgress(Progress):
    """One line per finished attempt: for logs and pipes."""

    def update(self, attempt: Any = None) -> None:
        if attempt is None:
            return
        f = self.figures()
        key = attempt.key
        self.console.print(
            f"[{f['done']}] {key.instance_id} {key.teacher}#{key.index}: {attempt.outcome}  "
            f"(resolved {f['resolved']}, kept {f['kept so far']}, {f['cost']}, ETA {f['ETA']})",
            markup=False, highlight=False,
        )


class LiveProgress(Progress):
    """A live table on a terminal."""

    def __init__(self, console: Console | None = None):
        super().__init__(console)
        # transient: the last frame (queued, ETA) is erased when the run ends, and the summary takes its place
        self.live = Live(self._table(), console=self.console, refresh_per_second=4, transient=True)

    def start(self, total: int, done: int, before: Iterable[Any] = (), kept: int = 0, spent: float = 0.0) -> None:
        super().start(total, done, before, kept, spent)
        self.live.start()

    def _table(self) -> Table:
        table = Table(show_header=False, box=None, title="factory run")
        for name, value in self.figures().items():
            table.add_row(name, value)
        return table

    def update(self, attempt: Any = None) -> None:
        self.live.update(self._table())

    def stop(self) -> None:
        self.live.stop()


class QuietProgress(Progress):
    def note(self, text: str) -> None:
        pass


def make_progress(quiet: bool) -> Progress:
    console = Console(stderr=True, soft_wrap=True)
    if quiet:
        return QuietProgress(console)
    return LiveProgress(console) if console.is_terminal else PlainProgress(console)
