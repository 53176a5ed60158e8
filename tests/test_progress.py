"""The live progress display as a terminal shows it: its frames are gone when the run ends."""

from __future__ import annotations

import io
import re
from types import SimpleNamespace

from rich.console import Console

from factory.run.progress import LiveProgress

_CONTROL = re.compile(r"\x1b\[(\??)(\d*)([A-Za-z])|\r|\n|[^\x1b\r\n]+")


def screen(output: str) -> list[str]:
    """The lines a terminal shows after `output`: the few controls rich's Live writes (cursor up,
    erase line, carriage return, cursor show/hide) applied, colours ignored."""
    lines, row, col = [""], 0, 0
    for match in _CONTROL.finditer(output):
        text = match.group(0)
        if text == "\n":
            row, col = row + 1, 0
            lines += [""] * (row + 1 - len(lines))
        elif text == "\r":
            col = 0
        elif text.startswith("\x1b"):
            private, n, code = match.group(1), int(match.group(2) or 1), match.group(3)
            if private:
                continue
            if code == "A":
                row = max(0, row - n)
            elif code == "K":
                lines[row] = lines[row][:col] if match.group(2) in ("", "0") else ""
        else:
            lines[row] = lines[row][:col].ljust(col) + text + lines[row][col + len(text):]
            col += len(text)
    return [line.rstrip() for line in lines if line.strip()]


def test_the_last_frame_gives_way_to_the_summary():
    console = Console(file=io.StringIO(), force_terminal=True, width=100, color_system=None)
    progress = LiveProgress(console)
    keys = [SimpleNamespace(instance_id=f"t-{k}", teacher="claude", index=0) for k in range(3)]
    progress.start(total=25, done=0)
    scheduler = SimpleNamespace(result=SimpleNamespace(kept=0, spent_usd=0.0))
    for k, key in enumerate(keys):
        progress.launched(key)
        progress.sampled(key)
        scheduler.result.kept, scheduler.result.spent_usd = k + 1, 0.1 * (k + 1)
        progress.finished(SimpleNamespace(key=key, verdict=SimpleNamespace(resolved=True)), scheduler)
        progress.live.refresh()
    assert any("queued (at most)" in line for line in screen(console.file.getvalue()))  # while it runs
    progress.stop()
    console.print("run stopped early: 3 attempts, 3 kept")
    assert screen(console.file.getvalue()) == ["run stopped early: 3 attempts, 3 kept"]
