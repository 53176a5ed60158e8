"""A task folder nothing may write into, and a listing to prove nothing did."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path


def listing(folder: Path) -> list[tuple[str, int]]:
    """Every entry under `folder` (the folder itself too) with its modification time."""
    return sorted((str(p.relative_to(folder)), p.stat().st_mtime_ns) for p in [folder, *folder.rglob("*")])


@contextlib.contextmanager
def read_only(folder: Path, mountpoint: Path) -> Iterator[Path]:
    """`folder` seen through a read-only bind mount at `mountpoint`: chmod does not stop root,
    which the tests run as. Where mounting is not allowed, `folder` itself, without write
    permission for a user who is not root (root still could: compare `listing`s as well)."""
    mountpoint.mkdir()
    mount = subprocess.run(["mount", "--bind", "-o", "ro", str(folder), str(mountpoint)], capture_output=True)
    if mount.returncode == 0:
        try:
            yield mountpoint
        finally:
            subprocess.run(["umount", str(mountpoint)], check=True)
        return
    modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")] if p.is_dir()}
    for p in modes:
        p.chmod(0o555)
    try:
        yield folder
    finally:
        for p, mode in modes.items():
            os.chmod(p, mode)
