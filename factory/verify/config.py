"""`verifier:`, the pipeline section for verification: time limits, memory, retries."""

from __future__ import annotations

import os

from pydantic import Field

from factory.section import Section


class VerifierConfig(Section):
    timeout: float = Field(default=900, gt=0)
    """Seconds the hidden tests may run, at most; the limit for a task that was never validated."""
    timeout_margin: float = Field(default=5.0, ge=1)
    """A validated task's tests may run this many times as long as its gold fix took to verify ..."""
    timeout_floor: float = Field(default=60, gt=0)
    """... but never less than this many seconds (a stall then costs a minute, not a quarter hour)."""
    memory: str = "4g"
    """Memory limit of the verification container."""
    reward_threshold: float = 1.0
    """A terminal task (Harbor) is resolved when the reward its tests write reaches this."""
    max_concurrent: int | None = Field(default=None, ge=1)
    """Verifications at once; None: one per CPU core of this machine. A verification is CPU
    work (a fresh container, the tests), so more at once only makes each slower; they overlap
    with sampling, which waits on the teacher."""
    ahead: int = Field(default=16, ge=0)
    """Verification containers started while their attempts sample, at most this many waiting at
    once (0: each verification starts its own when its attempt ends)."""
    infra_retries: int = Field(default=3, ge=0)
    """Redo a verification this many times (fresh container, backoff) when the engine failed it."""
    retry_wait: float = Field(default=2.0, ge=0)
    """Seconds before the first redo; doubles (with jitter) each time."""

    def concurrency(self) -> int:
        return self.max_concurrent or os.cpu_count() or 1

    def timeout_for(self, measured_seconds: float | None) -> float:
        """The test time limit of a task whose gold fix took `measured_seconds` to verify."""
        if not measured_seconds:
            return self.timeout
        return min(self.timeout, max(self.timeout_floor, self.timeout_margin * measured_seconds))
