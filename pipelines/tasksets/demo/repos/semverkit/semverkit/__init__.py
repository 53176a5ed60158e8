"""semverkit: parse Semantic Versioning 2.0.0 strings and match them against npm-style ranges.

    >>> from semverkit import Range, Version
    >>> Version.parse("1.4.0-rc.1") < Version.parse("1.4.0")
    True
    >>> Range("^1.2.0").contains("1.9.3")
    True
"""

from .errors import InvalidRange, InvalidVersion, SemverError
from .ranges import Comparator, Range, max_satisfying, min_satisfying, satisfies
from .version import Version, compare

__version__ = "1.0.0"

__all__ = [
    "Comparator",
    "InvalidRange",
    "InvalidVersion",
    "Range",
    "SemverError",
    "Version",
    "compare",
    "max_satisfying",
    "min_satisfying",
    "satisfies",
]
