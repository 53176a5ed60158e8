"""A terminal task's final state after a script of our own: how validation asks whether a Harbor
task's reference solution earns its reward, and whether doing nothing does not.

The script runs as root in a sandbox of the task's image, as an agent's commands would (the agent's
sandbox runs them as the sandbox's user; Harbor's `solve.sh` expects root), under the task's limits,
with what it leaves running kept (`SandboxConfig.for_terminal`), and the sandbox is then frozen the way
the executor freezes an agent's (`SandboxBackend.freeze`, services included), so the verifier judges
the two alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from factory.protocols import SandboxBackend
from factory.records import StartState, Task
from factory.sandbox.config import SandboxConfig

SCRIPT = "/tmp/factory-solve.sh"
"""Where the script is put in the sandbox: outside the work dir, so it is not part of the task's state."""


@dataclass(frozen=True)
class Played:
    state: str
    """The frozen state, an image id for the verifier (which removes it once judged)."""
    failed: str = ""
    """How the script failed (its exit code and last output), "" when it exited 0. Its state is
    frozen all the same: as with an agent, the tests decide, and this says why they may not agree."""


async def state_after(backend: SandboxBackend, task: Task, script: str, *, run_id: str, attempt_id: str,
                      seconds: float = 600) -> Played:
    """`task`'s sandbox frozen after `script` ran in it as root; an empty script leaves the start state."""
    assert task.terminal is not None
    config = SandboxConfig(user="root").for_terminal(task.terminal)
    sandbox = await backend.create(task.image, config, workdir=task.workdir, run_id=run_id, attempt_id=attempt_id)
    failed = ""
    try:
        await sandbox.prepare(StartState())
        if script:
            await sandbox.write_files({SCRIPT: script}, owner="root")
            done = await sandbox.exec(f"bash {SCRIPT}; status=$?; rm -f {SCRIPT}; exit $status",
                                      timeout=seconds, user="root")
            if done.exit_code != 0:
                ended = "ran past its time" if done.exit_code is None else f"exited {done.exit_code}"
                failed = f"{ended}: {done.output.strip()[-300:]}"
        return Played(await backend.freeze(sandbox, run_id, attempt_id), failed)
    finally:
        await sandbox.close()
