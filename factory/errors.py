"""One error tree for factory. Third-party errors are translated where they enter.

    FactoryError
    ├── UsageError          bad input a user can fix (exit code 2): config, task rows, CLI args
    │   └── ConfigError     a pipeline YAML at fault, with file:line:col and field path
    ├── SandboxError        the container, not the model, failed (infrastructure)
    │   ├── SandboxStartError
    │   ├── SandboxCrashed  died mid-attempt (removed, killed; `by_agent` when its own command did it)
    │   └── EngineError     any Docker engine call that failed, wherever it was made
    │       └── EngineGone  the container or image asked for is not there (404)
    ├── TeacherError        the model API failed after retries (infrastructure)
    │   └── TeacherFatal    never retried: 400/401/403/404, context length
    ├── VerifyError         the verifier itself could not run (infrastructure)
    ├── StorageError        a run's file could not be written (disk full, read-only, permission)
    └── NothingExported     an export in which every kept row was refused by the format (exit 1)
"""

from __future__ import annotations

import errno


class FactoryError(Exception):
    """Base of every error factory raises on purpose."""


class UsageError(FactoryError):
    """Bad input a user can act on; the CLI prints it on one line and exits 2."""


class ConfigError(UsageError):
    """A problem of a pipeline file; `problems` holds every problem found in it, this one first,
    and the text has one line each, so a user fixes them all in one pass."""

    def __init__(self, path: str, line: int | None, column: int | None, field: str, message: str):
        self.path, self.line, self.column, self.field, self.message = path, line, column, field, message
        where = path if line is None else f"{path}:{line}:{column}"
        super().__init__(f"{where}: {field + ': ' if field else ''}{message}")
        self.problems: list[ConfigError] = [self]

    @classmethod
    def of(cls, problems: list[ConfigError]) -> ConfigError:
        first = problems[0]
        err = cls(first.path, first.line, first.column, first.field, first.message)
        err.problems = problems
        err.args = ("\n".join(str(p) for p in problems),)
        return err


class SandboxError(FactoryError):
    """Infrastructure failure in a sandbox; counted apart from model failures."""


class SandboxStartError(SandboxError):
    pass


class SandboxCrashed(SandboxError):
    """The container died while in use.

    `by_agent`: the agent's own command brought it down (killed its keepalive, ran it out of
    memory). That is the model's failure, not infrastructure: redoing the attempt would
    replay the same command into the same crash.
    """

    def __init__(self, message: str, *, oom: bool = False, exit_code: int | None = None, by_agent: bool = False):
        super().__init__(message)
        self.oom, self.exit_code, self.by_agent = oom, exit_code, by_agent


class EngineError(SandboxError):
    """A Docker engine call failed (API error, dropped connection, timeout): infrastructure."""


class EngineGone(EngineError):
    """The engine has no such container or image (removed by someone, or never there)."""


class TeacherError(FactoryError):
    """The teacher API failed after the retries it was allowed."""


class TeacherFatal(TeacherError):
    """A teacher error that retrying cannot fix (bad request, auth, not found, context length)."""


class VerifyError(FactoryError):
    """The verifier could not run at all (not: the patch failed)."""


class StorageError(FactoryError):
    """A run's file could not be written: the run stops launching and ends with exit code 1;
    the message names the file and what to free or fix."""

    HINTS = {errno.ENOSPC: "free some space", errno.EDQUOT: "free some space or raise the quota",
             errno.EROFS: "make it writable", errno.EACCES: "fix its permissions", errno.EPERM: "fix its permissions"}
    """What to do about each errno that means "cannot write here"."""

    @classmethod
    def writing(cls, path: object, exc: OSError, *, then: str = "") -> StorageError:
        hint = cls.HINTS.get(exc.errno or 0, "fix it")
        return cls(f"cannot write {path}: {exc.strerror or exc}; {hint}{', then ' + then if then else ''}")


class NothingExported(FactoryError):
    """Every kept row was refused by the export format: an empty file would pass for a dataset."""
