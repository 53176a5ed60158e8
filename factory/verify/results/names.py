"""Test names as every reader and the grader compare them.

A name read from a report and a name from a task row (FAIL_TO_PASS) pass through the same
`clean`, so colours, timings and spacing never decide whether a test was seen.
"""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_TIMING = re.compile(r"\s*[(\[]\s*(?:\d+(?:\.\d+)?|\*)\s*(?:ms|s|m|sec|secs|µs|μs|ns)\s*[)\]]\s*$")
_SPACE = re.compile(r"\s+")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def strip_timing(name: str) -> str:
    """`works (12 ms)`, `TestX (0.00s)`, `first (*ms)` -> the name alone."""
    return _TIMING.sub("", name)


def clean(name: str) -> str:
    """No colour codes, no trailing duration, whitespace runs as one space, no ends."""
    return _SPACE.sub(" ", strip_timing(strip_ansi(name))).strip()
