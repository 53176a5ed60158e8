"""What an executor is given of a run (`Site`): the settings of the stages an attempt passes
through, the teachers, and where paid turns are journaled; never the whole pipeline."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factory.agent.config import AgentConfig
from factory.executor.config import ExecutorConfig
from factory.protocols import Teacher
from factory.records import AttemptKey, Task
from factory.sandbox.config import SandboxConfig
from factory.verify.config import VerifierConfig


@dataclass(frozen=True)
class Site:
    """What an executor needs of a run: the settings of sandbox, agent loop and verifier, the
    teachers, and where paid turns are journaled. The run (`factory.run.runner`) makes it."""

    run_id: str
    executor: ExecutorConfig
    agent: AgentConfig
    sandbox: SandboxConfig
    verifier: VerifierConfig
    teachers: dict[str, Teacher]
    """The run's teachers by label, built in this process."""
    teacher_configs: dict[str, Any]
    """Their configs by label: a Ray gateway builds its own teachers from them."""
    journal: Callable[[AttemptKey], Path | None]
    """Where an attempt's paid teacher turns are journaled; None: not journaled (free teachers)."""
    tasksets: list[tuple[str | None, list[Task]]]
    """Each task source's local folder (None for a Hub source) with its tasks: what a node builds."""
    note: Callable[[str], None] = lambda message: None
    """Tells the person running the run something worth knowing (the progress display's note)."""
