"""The verifier: a fresh container, a diff policy, hidden tests, a report agents cannot forge."""

from factory.verify.policy import apply_policy
from factory.verify.verifier import DockerVerifier, grade

__all__ = ["DockerVerifier", "apply_policy", "grade"]
