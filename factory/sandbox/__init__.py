"""Sandboxes: one container per attempt or verification, always cleaned up, on the backend that
`sandbox.backend` names (`factory.sandbox.backend`; Docker's is factory/sandbox/docker/)."""
