"""Progress of a run: a live display on a terminal, plain lines elsewhere, nothing with --quiet.

Shows done, in flight, queued, resolved %, kept, cost spent and projected, attempts per
minute and an ETA.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table


class Progress:
    """Counts attempts; subclasses decide how (and whether) to show them."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True, soft_wrap=True)
        self.total = self.done = self.inflight = self.resolved = self.verified = 0
        self.kept = 0
        self.spent = 0.0
        self.started = time.monotonic()
        self.done_at_start = 0

    def start(self, total: int, done: int) -> None:
        self.total, self.done, self.done_at_start = total, done, done
        self.started = time.monotonic()

    def launched(self, unit: Any) -> None:
        self.inflight += 1
        self.update()

    def finished(self, attempt: Any, scheduler: Any) -> None:
        self.inflight -= 1
        self.done += 1
        if attempt.verdict is not None:
            self.verified += 1
            self.resolved += attempt.verdict.resolved
        self.kept = scheduler.result.kept
        self.spent = scheduler.result.spent_usd
        self.update(attempt)

    def note(self, text: str) -> None:
        self.console.print(text)

    def update(self, attempt: Any = None) -> None:
        pass

    def stop(self) -> None:
        pass

    # ------------------------------------------------------------------ figures

    def rate_per_minute(self) -> float:
        minutes = (time.monotonic() - self.started) / 60
        return (self.done - self.done_at_start) / minutes if minutes > 0 else 0.0

    def figures(self) -> dict[str, str]:
        rate = self.rate_per_minute()
        queued = max(0, self.total - self.done - self.inflight)
        new = self.done - self.done_at_start
        projected = self.spent / new * (new + queued + self.inflight) if new else 0.0
        eta = (queued + self.inflight) / rate * 60 if rate else None
        return {
            "done": f"{self.done}/{self.total}",
            "in flight": str(self.inflight),
            "queued (at most)": str(queued),
            "resolved": f"{self.resolved}/{self.verified} ({100 * self.resolved / self.verified:.0f}%)" if self.verified else "-",
            "kept so far": str(self.kept),
            "cost": f"${self.spent:.2f} (projected ${projected:.2f})",
            "attempts/min": f"{rate:.1f}",
            "ETA": f"{eta / 60:.1f} min" if eta is not None else "-",
        }


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
        self.live = Live(self._table(), console=self.console, refresh_per_second=4, transient=False)

    def start(self, total: int, done: int) -> None:
        super().start(total, done)
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
