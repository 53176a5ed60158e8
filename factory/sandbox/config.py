"""`sandbox:`, the pipeline section for the agents' containers."""

from __future__ import annotations

from pydantic import Field

from factory.section import Section


class SandboxConfig(Section):
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
    output_limit_bytes: int = Field(default=1_000_000, ge=1024)
    """Bytes of command output kept per exec; the rest is cut with a marker."""
