"""One error tree for factory. Third-party errors are translated where they enter.

    FactoryError
    ├── UsageError          bad input a user can fix (exit code 2): config, task rows, CLI args
    │   └── ConfigError     a pipeline YAML at fault, with file:line:col and field path
    ├── SandboxError        the container, not the model, failed (infrastructure)
    │   ├── SandboxStartError
    │   └── SandboxCrashed  died mid-attempt (killed, OOM)
    ├── TeacherError        the model API failed after retries (infrastructure)
    │   └── TeacherFatal    never retried: 400/401/403/404, context length
    └── VerifyError         the verifier itself could not run (infrastructure)
"""

from __future__ import annotations


class FactoryError(Exception):
    """Base of every error factory raises on purpose."""


class UsageError(FactoryError):
    """Bad input a user can act on; the CLI prints it on one line and exits 2."""


class ConfigError(UsageError):
    def __init__(self, path: str, line: int | None, column: int | None, field: str, message: str):
        self.path, self.line, self.column, self.field, self.message = path, line, column, field, message
        where = path if line is None else f"{path}:{line}:{column}"
        super().__init__(f"{where}: {field + ': ' if field else ''}{message}")


class SandboxError(FactoryError):
    """Infrastructure failure in a sandbox; counted apart from model failures."""


class SandboxStartError(SandboxError):
    pass


class SandboxCrashed(SandboxError):
    """The container died while in use (killed, out of memory)."""

    def __init__(self, message: str, *, oom: bool = False, exit_code: int | None = None):
        super().__init__(message)
        self.oom, self.exit_code = oom, exit_code


class TeacherError(FactoryError):
    """The teacher API failed after the retries it was allowed."""


class TeacherFatal(TeacherError):
    """A teacher error that retrying cannot fix (bad request, auth, not found, context length)."""


class VerifyError(FactoryError):
    """The verifier could not run at all (not: the patch failed)."""
