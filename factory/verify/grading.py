"""The verdict on one pytest run, from the runner's records and the controls planted in it.

Every record comes out of the process that runs the code under test and may be forged, so
a record counts only as far as nothing shows tampering:

- the stream is what the plugin writes: well-formed records, no (test, phase) twice, nothing
  after the session's `done`, nothing from a process that outlived pytest;
- every control whose original passed has failed (`controls.py`): a forger that makes
  failures pass cannot spare the controls without telling them from real hidden tests;
- no class in a file the patch touched is equal to anything (the plugin's probe);
- the plugin saw nothing of the test machinery altered and no blind check's stand-in misused
  (`altered` records: a verdict `tampered`, flagged `altered test machinery`);
- a test reported passed also sent every one of its blind checks, each with the value the host
  expects (`blind.py`): those values never were in the test process.

Then: `timeout`, `no_report` (the session never finished), `tests_failed` naming a test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from factory.records import Check, FlagKind, Reason, Task, TestStatus, Verdict, VerdictFlag
from factory.verify import blind
from factory.verify.classes import Classes
from factory.verify.controls import Control, ControlPlan, split_id

PHASES = ("setup", "call", "teardown")


@dataclass
class TestRun:
    """What the runner reported (records in arrival order), and the plan that only the host knows."""

    __test__ = False  # not a pytest test class

    records: list[Any] = field(default_factory=list)
    malformed: int = 0
    late: int = 0
    """Bytes that reached the report pipe after pytest had exited."""
    overflow: bool = False
    timed_out: bool = False
    exit_stalled: bool = False
    """The session ended, then pytest did not exit in time (an exit handler stalled)."""
    log_tail: str = ""
    runner_failed: str = ""
    """The runner left no report: the end of its output."""
    controls: list[Control] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    """Hidden test id -> the id it ran under."""
    weak: str = ""
    failed_at: dict[str, int] = field(default_factory=dict)
    """Test id as it ran -> the top-level statement of its body that raised, for the tests that failed."""
    blind: dict[str, list[blind.Expected]] = field(default_factory=dict)
    classes: Classes | None = None
    """The repo's class tree as the tests saw it: what a blind `pytest.raises` may accept."""

    @classmethod
    def from_report(cls, report: dict, plan: ControlPlan, classes: Classes | None = None) -> TestRun:
        records = list(report.get("records", []))
        lines = {r["nodeid"]: r["line"] for r in records if isinstance(r, dict) and r.get("kind") == "test"
                 and isinstance(r.get("nodeid"), str) and isinstance(r.get("line"), int)}
        failed_at = {nodeid: index for nodeid, line in lines.items() if (index := plan.statement_at(nodeid, line)) is not None}
        return cls(records=records, malformed=int(report.get("malformed", 0)),
                   late=int(report.get("late", 0)), overflow=bool(report.get("overflow")),
                   timed_out=bool(report.get("timed_out")), exit_stalled=bool(report.get("exit_stalled")),
                   log_tail=str(report.get("log_tail", "")),
                   controls=plan.controls, renamed=plan.renamed, weak=plan.weak, failed_at=failed_at,
                   blind=plan.blind, classes=classes)


@dataclass
class _Stream:
    phases: dict[str, dict[str, dict]] = field(default_factory=dict)
    done: bool = False
    always_equal: set[str] = field(default_factory=set)
    as_it_was: set[str] = field(default_factory=set)
    """Classes equal to anything whose every yes ran code the patch left as it was (an expression builder's)."""
    seen: dict[str, dict[int, list[Any]]] = field(default_factory=dict)
    """Test id -> blind check number -> the values it sent."""
    altered: list[str] = field(default_factory=list)
    """What the plugin saw changed in the test machinery, or a blind check misused (`altered` records)."""
    problems: list[str] = field(default_factory=list)


def _read(records: list[Any]) -> _Stream:
    """Phases per test, or the first ways in which the stream is not what the plugin writes."""
    s = _Stream()
    for number, record in enumerate(records):
        if s.done:
            s.problems.append("records after the session's end")
            break
        if not isinstance(record, dict) or record.get("seq") != number:
            # the plugin numbers what it writes; a record written to its pipe by other code, or one
            # left out, breaks the count
            s.problems.append(f"record {number} is out of the plugin's sequence")
            break
        kind = record.get("kind")
        if kind == "test":
            nodeid, when = record.get("nodeid"), record.get("when")
            if not (isinstance(nodeid, str) and when in PHASES and isinstance(record.get("outcome"), str)):
                s.problems.append("a test record the reporter does not write")
            elif when in s.phases.setdefault(nodeid, {}):
                s.problems.append(f"{nodeid} reported twice ({when})")
            else:
                s.phases[nodeid][when] = record
        elif kind == "seen":
            nodeid, number = record.get("nodeid"), record.get("check")
            if not (isinstance(nodeid, str) and type(number) is int and "value" in record):
                s.problems.append("a check record the reporter does not write")
            else:
                s.seen.setdefault(nodeid, {}).setdefault(number, []).append(record["value"])
        elif kind == "altered":
            s.altered.extend(str(x)[:300] for x in record.get("what") or ["(unnamed)"])
        elif kind in ("collected", "done"):
            s.always_equal.update(str(x) for x in record.get("always_equal") or [])
            s.as_it_was.update(str(x) for x in record.get("as_it_was") or [])
            s.done = kind == "done"
        elif kind != "collect_error":
            s.problems.append("a line the reporter does not write")
    return s


def _status(phases: dict[str, dict]) -> TestStatus:
    call = phases.get("call")
    if any(p["outcome"] == "failed" for w, p in phases.items() if w != "call"):
        return TestStatus.error
    if call is None:
        skipped = any(p["outcome"] == "skipped" for p in phases.values())
        return TestStatus.skipped if skipped else TestStatus.missing
    if call.get("xfail"):
        return TestStatus.xfailed
    return TestStatus(call["outcome"]) if call["outcome"] in ("passed", "failed", "skipped") else TestStatus.error


def grade(task: Task, run: TestRun, flags: list[VerdictFlag]) -> Verdict:
    """Resolved only if every FAIL_TO_PASS and PASS_TO_PASS test passed and nothing shows tampering."""
    flags = [*flags, *([VerdictFlag(kind=FlagKind.weak_controls, detail=run.weak)] if run.weak else [])]
    stream = _read(run.records)
    if stream.as_it_was:
        flags.append(VerdictFlag(kind=FlagKind.equal_as_it_was, detail=", ".join(sorted(stream.as_it_was))[:300]))
    failed_blind: dict[str, tuple[int, str]] = {}
    """Test id as it ran -> (statement, why) for tests pytest passed whose blind checks did not."""

    def status(ran: str) -> TestStatus:
        reported = _status(stream.phases.get(ran, {}))
        checks = run.blind.get(ran.partition("[")[0])
        if reported is TestStatus.passed and checks and \
                (why := blind.judge(stream.seen.get(ran, {}), checks, split_id(ran)[3], run.classes)):
            failed_blind[ran] = why
            return TestStatus.failed
        return reported

    tests = {nid: status(run.renamed.get(nid, nid)) for nid in dict.fromkeys([*task.FAIL_TO_PASS, *task.PASS_TO_PASS])}
    checked = [c for c in run.controls if not c.original or tests.get(c.original) is TestStatus.passed]
    control_status = {c.nodeid: status(c.nodeid) for c in checked}

    def failed_at(ran: str) -> int | None:
        """The first statement that failed: raised in the process, or a blind check the host failed."""
        found = [i for i in (run.failed_at.get(ran), failed_blind.get(ran, (None,))[0]) if i is not None]
        return min(found) if found else None

    fails_at = {nid: at for nid in task.FAIL_TO_PASS
                if tests.get(nid) is TestStatus.failed and (at := failed_at(run.renamed.get(nid, nid))) is not None}

    def verdict(reason: Reason | None, detail: str = "", by: Check = Check.tests) -> Verdict:
        return Verdict(resolved=reason is None, reason=reason, detail=detail, tests=tests, flags=flags,
                       controls=len(run.controls), decided_by=by, fails_at=fails_at)

    if run.malformed or run.overflow:
        return verdict(Reason.tampered, f"the report pipe carried {run.malformed or 'too many'} lines that are no records",
                       Check.tamper_probe)
    if run.late:
        return verdict(Reason.tampered, f"{run.late} bytes reached the report pipe after pytest had exited",
                       Check.tamper_probe)
    if stream.problems:
        return verdict(Reason.tampered, "the report was forged: " + stream.problems[0], Check.tamper_probe)
    if stream.altered:
        flags.append(VerdictFlag(kind=FlagKind.altered_machinery, detail="; ".join(stream.altered[:5])))
        return verdict(Reason.tampered, "the test machinery was altered while the tests ran: "
                                        + "; ".join(stream.altered[:5]), Check.tamper_probe)
    if stream.always_equal:
        return verdict(Reason.tampered, "objects equal to anything: " + ", ".join(sorted(stream.always_equal)),
                       Check.tamper_probe)
    passed = [nid for nid, status in control_status.items() if status is TestStatus.passed]
    if passed:
        return verdict(Reason.tampered, f"a control passed ({passed[0]}): a copy of a hidden test with a wrong "
                                        "expected value, which no honest run passes along with its original",
                       Check.controls)
    if run.exit_stalled:
        return verdict(Reason.timeout, "pytest did not exit after its session ended (a stalled exit handler?)")
    if run.timed_out:
        return verdict(Reason.timeout, "the tests did not finish in time")
    if not stream.done:
        detail = run.runner_failed or run.log_tail
        return verdict(Reason.no_report, "the test run ended without a complete report: " + detail.strip()[-1500:])
    spared = [(nid, status) for nid, status in control_status.items() if status is not TestStatus.failed]
    if spared:
        return verdict(Reason.tampered, f"a control was {spared[0][1]}, not failed, while its original passed "
                                        f"({spared[0][0]})", Check.controls)
    failing = [nid for nid, status in tests.items() if status is not TestStatus.passed]
    if failing:
        why = failed_blind.get(run.renamed.get(failing[0], failing[0]))
        return verdict(Reason.tests_failed, f"{len(failing)} of {len(tests)} tests not passed, e.g. {failing[0]}"
                                            + (f" ({why[1]})" if why else ""))
    return verdict(None)
