"""The exceptions semverkit raises.

Every error is a :class:`SemverError`, which is also a :class:`ValueError`::

    SemverError
     ├── InvalidVersion   a string that is not a semantic version
     └── InvalidRange     a string that is not a version range
"""


class SemverError(ValueError):
    """Base class of every error raised by semverkit."""


class InvalidVersion(SemverError):
    """A string could not be parsed as a semantic version."""


class InvalidRange(SemverError):
    """A string could not be parsed as a version range."""
