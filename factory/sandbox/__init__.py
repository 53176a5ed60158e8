"""Docker sandboxes: one container per attempt or verification, always cleaned up."""

from factory.sandbox.docker import DockerSandbox
from factory.sandbox.engine import reap_run, remove_containers, remove_left

__all__ = ["DockerSandbox", "reap_run", "remove_containers", "remove_left"]
