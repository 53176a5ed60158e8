"""`sandbox:`, the pipeline section for the agents' containers."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from factory.records import TerminalSpec
from factory.sandbox.backend import BACKENDS, DEFAULT_BACKEND
from factory.section import Section


class SandboxConfig(Section):
    backend: Annotated[str, AfterValidator(BACKENDS.check)] = DEFAULT_BACKEND
    """Where the containers live (`factory.sandbox.backend`): `docker`, this machine's Docker
    engine or DOCKER_HOST's; `podman`, rootless Podman run by an unprivileged user (`make podman`).
    Every other setting here holds on every backend."""
    network: str = "none"
    """Docker network mode of agent containers; `none` keeps them offline."""
    memory: str = "2g"
    """Memory limit per container (Docker units)."""
    cpus: float = Field(default=1.0, gt=0)
    """CPU limit per container."""
    pids_limit: int = Field(default=512, ge=16)
    """Process limit per container: a fork bomb stops here."""
    user: str = "agent"
    """User the agent's commands run as, created at start where the image lacks it (SWE-bench and
    SWE-smith images have only root); `root` runs them as root."""
    max_live: int = Field(default=8, ge=1)
    """Containers alive at once, warm ones included."""
    warm: int = Field(default=0, ge=0)
    """Containers created ahead of need per image."""
    create_rate: float = Field(default=4.0, gt=0)
    """Container creations per second, at most."""
    self_destruct_seconds: int = Field(default=4 * 3600, ge=60)
    """A container removes itself after this long, even if the factory died."""
    pull_concurrency: int = Field(default=2, ge=1)
    """Images pulled from their registries at once (an image not on the engine is pulled when first needed)."""
    pull_attempts: int = Field(default=6, ge=1)
    """Tries per pull; rate limits (HTTP 429) and passing faults wait with growing backoff in between."""
    image_cache_gb: float | None = Field(default=None, gt=0)
    """Disk the run's own pulls may hold: past it, pulled images that no remaining task needs are
    removed. None: no bound. Images found on the engine, or used by any container, stay."""
    keep_detached: bool = False
    """Processes a command leaves running with their output detached from it (`server > log 2>&1 &`)
    run on after it; those still writing to its output are killed when it returns. Set for terminal
    tasks, whose final state includes the services the agent left running (docs/verify.md); otherwise
    every process a command leaves is killed when it returns."""
    as_built: bool = False
    """The work dir stays as the image holds it: its own `.git` (a task's repo, mid-merge, with its
    config), bytecode and owners. The factory still records the start state in its own git dir for
    the diff. Set for terminal tasks, judged by their final state, whose image is the start state
    and whose history holds no fix to hide; a patch task's work dir gets the agent's view instead
    (history dropped, `Sandbox.prepare`)."""
    output_limit_bytes: int = Field(default=1_000_000, ge=1024)
    """Bytes of command output kept per exec; the rest is cut with a marker."""

    def for_terminal(self, spec: TerminalSpec) -> SandboxConfig:
        """The sandbox of a terminal task's agent: the task's cpus, memory and network where they are
        tighter than these (a task cannot loosen the pipeline's limits), its detached processes
        kept, for they are part of the state it is judged by, the work dir as built, and root as
        the agent's user unless the pipeline names one (`sandbox.user`)."""
        cpus = min(self.cpus, spec.cpus or self.cpus)
        memory = self.memory
        if spec.memory_mb and spec.memory_mb < megabytes(self.memory):
            memory = f"{spec.memory_mb}m"
        network = self.network if spec.network else "none"
        user = self.user if "user" in self.model_fields_set else "root"  # as Harbor runs its agents
        return self.model_copy(update={"cpus": cpus, "memory": memory, "network": network, "keep_detached": True,
                                       "as_built": True, "user": user})


def megabytes(memory: str) -> float:
    """A Docker memory size (`2g`, `512m`, `1048576`) in megabytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bkmg]?)b?\s*", memory, re.I)
    if not match:
        raise ValueError(f"{memory!r} is not a memory size such as 2g or 512m")
    return float(match.group(1)) * {"": 2**-20, "b": 2**-20, "k": 2**-10, "m": 1, "g": 2**10}[match.group(2).lower()]
