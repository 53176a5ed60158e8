"""The seam between the verification core and a test framework.

    core: fresh container ─► git lists the patch ─► policy ─► apply (+ `readback`, one exec)
    framework:                                         run(Trial) ─► plan, upload, run, read, grade ─► Verdict

The core owns what holds in every language: a container the agent never ran in, git's reading
of the diff, the path policy, apply, retries, reuse, containers started ahead, the time limit.
A framework owns what tests are and how their results are read, and holds the core's threat
model: the code under test runs as the attacker, so nothing that decides the verdict is in its
reach (`docs/verify.md`). A framework that cannot plant controls says so in the verdict.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from factory.protocols import Sandbox
from factory.records import Task, Verdict, VerdictFlag

TRUSTED = "/opt/factory-verify"
"""The framework's own programs in the container: root's, readable by all."""
PRIVATE = "/root/factory-verify"
"""The job, the setup script, the report: root only."""
TEST_UID = 1000
"""The tests run as this user, which owns nothing in the repo."""
SHELL_SYNTAX = frozenset("|&;<>()$`\\\"'*?[]{}~\n")
"""A command holding any of these is more than one plain program with words: root does not run it."""


@dataclass
class Trial:
    """A container at the start state with the agent's kept sections and the hidden tests in
    place, handed to the framework to run and judge."""

    sandbox: Sandbox
    task: Task
    touched: list[str]
    """Paths the applied sections change."""
    printed: str
    """What the framework's `readback` printed, right after the patches went in."""
    restore: dict[str, bytes | None]
    """Files to put back at their start-state content before the tests (None: remove it): test
    configuration the policy left out of a packaging file."""
    flags: list[VerdictFlag]
    """The flags so far (policy, static): the verdict carries them."""
    limit: float
    """Seconds the tests may run."""
    within_limit: Callable[[asyncio.Future], Awaitable[bool]]
    """Waits for the test run; False when the core cut it at the task's fitted limit."""

    def restored_files(self) -> dict[str, bytes]:
        return {path: data for path, data in self.restore.items() if data is not None}

    def removed(self) -> list[str]:
        return [path for path, data in self.restore.items() if data is None]


@dataclass(frozen=True)
class RootBuild:
    """Root compiles a task's tests and hands each test binary to the tests' user, who cannot read a
    test's source (`go_exec.py`, `rust_exec.py`): compiling runs none of the patch's code."""

    files: dict[str, str]
    """Root's programs, written before the run."""
    setup: list[str]
    """Root's lines before the run, the repo already root's and read-only."""
    runner: str
    """The line that runs the tests, as root (the tests' user runs only the binaries)."""


class TestFramework(Protocol):
    """Runs a task's hidden tests in a trial container and grades them (`factory.verify.frameworks`)."""

    __test__ = False  # not a pytest test class

    def readback(self, task: Task, touched: list[str]) -> str:
        """Shell (root, in the repo) run right after the patches are applied, in the same exec:
        it prints what `run` needs to plan (`factory.sandbox.printed`)."""
        ...

    async def run(self, trial: Trial) -> Verdict: ...


def lock(paths: str) -> list[str]:
    """Shell: everything under `paths` (shell words) is root's and writable by root alone, the
    way `chown -R root:root` and `chmod -R go-w` leave it, but only the files not so already are
    changed: on overlayfs a chown or chmod copies its file up into the container's layer, and the
    repo of a root verification container is root's already (`chown -R` of a 27 MB tree: 0.97 s
    of CPU and its whole size copied; the same tree through `find`: 0.015 s). Symbolic links are
    changed themselves (`-h`), never followed; chmod, which would follow one, skips them as
    `chmod -R` does. (POSIX `find` alone: BusyBox's has no `-perm /`.)"""
    return [f"find {paths} \\( ! -user 0 -o ! -group 0 \\) -exec chown -h root:root {{}} +",
            f"find {paths} ! -type l \\( -perm -020 -o -perm -002 \\) -exec chmod go-w {{}} +"]
