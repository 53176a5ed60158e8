"""What blind checks share in every language of the `command` framework (`jsblind.py`,
`javablind.py`): the plan's shape, drawn ids, and the host's judging of the values sent.

A language's module rewrites each check of a FAIL_TO_PASS test (and its copies) against a literal
into a call of its sender, which writes `id TAB record` lines to a file root reads after the run;
the literal stays on the host in a `Check`. `judge` holds each test its runner passed to its
checks: exactly one value per check, equal as the assertion would have found it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from factory.records import TestStatus
from factory.verify import results
from factory.verify.results.names import clean


class Check(Protocol):
    """What one blind check expects, on the host only."""

    test: str
    """The id its test is reported under in this run (a renamed original's or a copy's)."""
    where: str
    """`file:line`, for the verdict."""

    def passes(self, value) -> bool: ...


@dataclass
class Blind:
    files: dict[str, str] = field(default_factory=dict)
    """Test file -> its text with the checks rewritten (only files that changed)."""
    checks: dict[str, Check] = field(default_factory=dict)
    """Check id -> what it expects."""
    sender: dict[str, str] = field(default_factory=dict)
    """Root's files the sender needs (path in the container -> text)."""
    setup: list[str] = field(default_factory=list)
    """Root's lines before the run (e.g. compiling the sender)."""
    environment: str = ""
    """What the tests' processes need to reach the sender (`NAME=value ...`)."""
    readable: list[str] = field(default_factory=list)
    """Hidden tests (their run ids) with a check against a literal that stays as written: its
    expected value is readable to the code under test (the verdict says so)."""
    reads: Callable[[str], tuple[str, object] | None] = lambda line: None
    """A line the sender wrote -> (check id, value); None for a line it would not write."""


def fresh_id(taken: dict[str, Check], rng: random.Random) -> str:
    """A drawn id, so that twins read alike (numbered ids would rank them)."""
    while (check_id := f"{rng.getrandbits(32):08x}") in taken:
        pass
    return check_id


def judge(read: results.Results, blind: Blind, written: bytes | None) -> tuple[results.Results, dict[str, str], str | None]:
    """The run's results with each test its runner passed but its blind checks did not made
    failed, why each was, and why the values are not the checks' own (a value for no check, a
    line the sender does not write: only code other than the sender writes those)."""
    values: dict[str, list[object]] = {}
    for line in (written or b"").decode(errors="replace").splitlines():
        got = blind.reads(line)
        if got is None or got[0] not in blind.checks:
            return read, {}, f"a blind-check value that no check of this run sent: {line[:120]!r}"
        values.setdefault(got[0], []).append(got[1])
    failed: dict[str, str] = {}
    for check_id, check in blind.checks.items():
        if check.test in failed or results.status_of(read, check.test)[0] is not TestStatus.passed:
            continue
        got = values.get(check_id, [])
        if len(got) != 1:
            failed[check.test] = f"its blind check at {check.where} sent {len(got)} values, not one"
        elif not check.passes(got[0]):
            failed[check.test] = f"its blind check at {check.where} sent a value the assertion would refuse"
    if not failed:
        return read, {}, None
    wanted = {clean(t) for t in failed}
    cases = tuple(replace(c, status=TestStatus.failed) if wanted & set(c.ids) else c for c in read.cases)
    # the runner's counts and exit status speak of what it ran, not of what the host judged
    judged = results.Results(cases=cases, found=read.found, structured=read.structured,
                             carried=read.problems[len(read.found):])
    return judged, failed, None
