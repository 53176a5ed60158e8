"""What a reader returns: the test cases a run reported, and the evidence around them.

A reader turns one runner's output into `Results`; it never judges. Grading
(`grading.grade`) asks `Results` what it needs: each case's status, whether the suite ran at
all, and the problems that make its report short of evidence.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum

from factory.records import TestStatus

_RANK = {TestStatus.passed: 0, TestStatus.xfailed: 1, TestStatus.skipped: 2,
         TestStatus.missing: 3, TestStatus.failed: 4, TestStatus.error: 5}
"""A test reported more than once keeps its worst status: a failure is never outvoted."""


def worst(statuses: list[TestStatus]) -> TestStatus:
    return max(statuses, key=_RANK.__getitem__)


class ProblemCode(StrEnum):
    not_run = "not_run"
    """Nothing in the output says a test ran: no case, no summary of one."""
    build_failed = "build_failed"
    """The code did not compile (a Go package, a cargo target): its tests never ran."""
    suite_failed = "suite_failed"
    """A package, test binary or file failed with no failing test to show for it (a panic in
    `TestMain`, a crash between tests, a cargo binary that ended without its summary)."""
    malformed = "malformed"
    """The report could not be read (truncated, invalid): no evidence, never a crash."""
    hostile = "hostile"
    """The report declares a DTD or entities: no runner writes one, an attack on the reader does."""
    count_mismatch = "count_mismatch"
    """The report's header or summary claims counts its cases do not add up to."""
    exit_contradicts = "exit_contradicts"
    """The runner's exit status says the opposite of the report (0 with failures, or not 0
    with every test passed)."""
    bailed = "bailed"
    """The runner stopped early on purpose (TAP `Bail out!`): later tests never ran."""


DENIES_PASS = frozenset({ProblemCode.not_run, ProblemCode.malformed, ProblemCode.hostile,
                         ProblemCode.exit_contradicts})
"""Problems that leave no report to trust. The others are recorded and shown; the tests they
concern are graded on their own (a package that failed to build has its tests missing). A
count mismatch alone cannot refuse: real reporters disagree with their own headers
(mocha-junit-reporter's root total, gotestsum's `TestMain` pseudo-case)."""

FAILING = frozenset({ProblemCode.build_failed, ProblemCode.suite_failed, ProblemCode.bailed})
"""Problems that explain a runner's non-zero exit as a failing test does."""


@dataclass(frozen=True)
class Problem:
    code: ProblemCode
    detail: str = ""


@dataclass(frozen=True)
class Case:
    """One report of one test."""

    id: str
    """The framework's own id: Go `TestX/sub_name`, cargo `module::test`, JUnit
    `classname.name`, jest `describe › it`, mocha's full title."""
    status: TestStatus
    suite: str = ""
    """Where it ran: the Go package, cargo binary, JUnit suite, test file."""
    aliases: tuple[str, ...] = ()
    """Other ids task sets use for the same test: JUnit `Class#method` and the bare name, the
    bare jest title that SWE-bench's `parse_log_jest` keys on."""
    flaky: bool = False
    """It failed and then passed on a rerun (Surefire `flakyFailure`, jest `invocations`)."""

    @property
    def ids(self) -> tuple[str, ...]:
        return (self.id, *self.aliases)


@dataclass(frozen=True)
class Counts:
    """Counts of cases; in a claim, None where the report does not say."""

    total: int | None = None
    passed: int | None = None
    failed: int | None = None
    errors: int | None = None
    skipped: int | None = None

    @classmethod
    def of(cls, cases: tuple[Case, ...]) -> Counts:
        n = Counter(c.status for c in cases)
        return cls(total=len(cases), passed=n[TestStatus.passed], failed=n[TestStatus.failed],
                   errors=n[TestStatus.error], skipped=n[TestStatus.skipped])

    def disagreements(self, seen: Counts) -> list[str]:
        """`claimed N, saw M` for each count this claim gives that `seen` does not match."""
        out = []
        for name in ("total", "passed", "failed", "errors", "skipped"):
            claimed = getattr(self, name)
            if claimed is not None and claimed != getattr(seen, name):
                out.append(f"{name}: claimed {claimed}, saw {getattr(seen, name)}")
        return out


@dataclass(frozen=True)
class Results:
    """One run as its output reports it."""

    cases: tuple[Case, ...] = ()
    """Every report, in order: a test reported twice is here twice."""
    claimed: Counts | None = None
    """What the report's header or summary says it holds."""
    found: tuple[Problem, ...] = ()
    """Problems the reader saw in the output (a build failure, a malformed file)."""
    exit_code: int | None = None
    """The runner's exit status, when the caller knows it is the runner's own."""
    structured: bool = True
    """False for text output, which the code under test can forge by printing result lines."""
    carried: tuple[Problem, ...] = ()
    """What the whole of the runner's own report gave (its counts, its exit status) when the host
    has since changed statuses (a blind check failed a test the runner passed): kept as it was."""
    seen: Counts = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seen", Counts.of(self.cases))

    @property
    def statuses(self) -> dict[str, TestStatus]:
        """Case id -> status; a test reported more than once keeps its worst."""
        merged: dict[str, list[TestStatus]] = {}
        for case in self.cases:
            merged.setdefault(case.id, []).append(case.status)
        return {name: worst(statuses) for name, statuses in merged.items()}

    @property
    def twice(self) -> tuple[str, ...]:
        """Ids reported more than once in the same suite (a rerun, a lying report)."""
        n = Counter((c.suite, c.id) for c in self.cases)
        return tuple(dict.fromkeys(name for (_, name), k in n.items() if k > 1))

    @property
    def flaky(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.id for c in self.cases if c.flaky))

    @property
    def ran(self) -> bool:
        """Some test ran and the report can be read."""
        return bool(self.cases) and not any(p.code in DENIES_PASS for p in self.found)

    @property
    def problems(self) -> tuple[Problem, ...]:
        """What the reader found, plus what follows from the whole: nothing ran, counts that
        do not add up, an exit status that contradicts the report."""
        derived = []
        if not self.cases and not any(p.code in DENIES_PASS | FAILING for p in self.found):
            derived.append(Problem(ProblemCode.not_run, "the output reports no test"))
        if self.claimed is not None and (wrong := self.claimed.disagreements(self.seen)):
            derived.append(Problem(ProblemCode.count_mismatch, "; ".join(wrong)))
        if (contradiction := self._exit_contradiction()) is not None:
            derived.append(Problem(ProblemCode.exit_contradicts, contradiction))
        return (*self.found, *self.carried, *derived)

    def _exit_contradiction(self) -> str | None:
        if self.exit_code is None:
            return None
        failing = self.seen.failed + self.seen.errors
        broken = [p.code.value for p in self.found if p.code in FAILING]
        if self.exit_code == 0 and (failing or broken):
            return f"exit 0, but {failing} tests failed" + (f" and {', '.join(broken)}" if broken else "")
        unreadable = any(p.code in DENIES_PASS for p in self.found)
        if self.exit_code != 0 and self.cases and not (failing or broken or unreadable):
            return f"exit {self.exit_code}, but no test failed"
        return None
