"""A sandbox over a host folder, for loop tests without Docker. No isolation at all: tests only.

It keeps what the loop relies on from `Sandbox`: bash in the workdir with a real timeout,
files relative to the workdir, and `diff` against the start commit, untracked files included.
`crash_on` makes a command kill it (as `SandboxCrashed`), like a container dying mid-attempt.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from factory.errors import SandboxCrashed
from factory.protocols import ExecResult
from factory.records import Task

DEMO = Path(__file__).resolve().parents[2] / "pipelines" / "tasksets" / "demo"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]


class LocalSandbox:
    def __init__(self, root: Path):
        self.root = root
        self.workdir = str(root)
        self.closed = False
        self.commands: list[str] = []
        self.crash_on: str | None = None
        self.env = {
            "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(root.parent),
            "LANG": "C.UTF-8",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }

    @classmethod
    def with_files(cls, tmp: Path, files: dict[str, str]) -> LocalSandbox:
        root = tmp / "repo"
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        return cls._committed(root)

    @classmethod
    def for_task(cls, task: Task, tmp: Path) -> tuple[LocalSandbox, Task]:
        """The demo task's start state in `tmp`, and the task with its workdir pointing there."""
        root = tmp / "testbed"
        shutil.copytree(DEMO / "repos" / task.repo.split("/")[-1], root)
        if task.start.bug_patch:
            subprocess.run(
                [*GIT, "apply", "-"], cwd=root, input=task.start.bug_patch, text=True, check=True
            )
        for path in task.start.hide_paths:
            (root / path).unlink()
        return cls._committed(root), task.model_copy(update={"workdir": str(root)})

    @classmethod
    def _committed(cls, root: Path) -> LocalSandbox:
        root.mkdir(parents=True, exist_ok=True)
        for args in (
            ["init", "-q"],
            ["add", "-A"],
            ["commit", "-q", "--allow-empty", "-m", "start"],
        ):
            subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True)
        return cls(root)

    async def exec(
        self, cmd: str, timeout: float | None = None, *, user: str | None = None
    ) -> ExecResult:
        if self.closed:
            raise SandboxCrashed("local sandbox is gone")
        self.commands.append(cmd)
        if self.crash_on is not None and self.crash_on in cmd:
            self.closed = True
            raise SandboxCrashed("local sandbox died mid-attempt (crash_on)")
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            cmd,
            cwd=self.root,
            env=self.env,
            start_new_session=True,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout or 3600)
        except TimeoutError:
            return ExecResult(exit_code=None, output="", timed_out=True)
        finally:
            if proc.returncode is None:
                os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        return ExecResult(exit_code=proc.returncode, output=out.decode(errors="replace"))

    def _path(self, path: str) -> Path:
        return Path(path) if path.startswith("/") else self.root / path

    async def read_file(self, path: str) -> bytes:
        return self._path(path).read_bytes()

    async def write_file(self, path: str, data: bytes | str) -> None:
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data.encode() if isinstance(data, str) else data)

    async def list_files(self, path: str = ".") -> list[str]:
        target = self._path(path)
        return sorted(p.name + ("/" if p.is_dir() else "") for p in target.iterdir())

    async def diff(self) -> str:
        index = self.root.parent / "diff-index"
        env = {**self.env, "GIT_INDEX_FILE": str(index)}
        for args in (["read-tree", "HEAD"], ["add", "-A"]):
            subprocess.run([*GIT, *args], cwd=self.root, env=env, check=True, capture_output=True)
        done = subprocess.run(
            [*GIT, "diff", "--cached", "--binary", "--no-color", "--no-renames", "HEAD"],
            cwd=self.root,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout

    async def close(self) -> None:
        self.closed = True
