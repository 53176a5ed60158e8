"""Files written whole or not at all: a reader, or a process killed mid-write, never sees half
of one. Below every stage, so the run folder, the report and the build share one way to write."""

from __future__ import annotations

import os
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file, fsync, rename: readers and crashes see all or nothing. A
    failed write (disk full, read-only) leaves no temporary file and raises the `OSError`."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}{TEMP_SUFFIX}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
