"""`command`: any test runner whose report a result reader reads (`go test -json`, jest, JUnit,
cargo): the task's command runs as the tests' user, and the report is read and graded on the host.

    readback:     the test files that define the FAIL_TO_PASS tests, and those beside them (`copies/plant.py`)
    plan (host):  the language's writer copies each FAIL_TO_PASS test with one expected value
                  changed and renames its original (`copies/base.py`); the plan stays on the host
    setup (root): the left-out files put back, the copies written in, the repo root's and
                  read-only, a canary planted, a scratch folder of the tests' user (home, temp,
                  build caches, REPORT_DIR)
    run:          the command as TEST_UID, stdin empty, its output into a root-owned file, under
                  `timeout`; then every process of TEST_UID is killed, so nothing writes after
                  (a plain `go test` or `cargo test`: compiled by root, each binary run as TEST_UID,
                  who cannot read the tests' source: `go_exec.py`, `rust_exec.py`)
    read:         exit status, output and the report file come back in root's output
                  (`factory.sandbox.printed`) ─► `results.read` ─► canary and copies ─► `results.grade`

What it gives: the verdict reads what the framework's runner wrote (structured first), a test
the report never names fails, a run with no evidence of tests is not a pass, an exit status
that contradicts the report is not a pass, nothing the code under test prints reaches root's
output, and a report in which the canary or a copy whose original passed did not fail is
`tampered`: a forger must tell copies from originals, which differ by one literal, under names
of the same kind. In JavaScript run by mocha, `node --test` or jest, and in Java's JUnit 5, blind
checks (`jsblind.py`, `javablind.py`) keep the hidden tests' expected values on the host: a test
passes only if it sent each value, equal.
What it does not give: blind checks in Go, Rust (their tests are unreadable instead) or under vitest, and copies where the
writer finds no site or the command selects tests by name; the verdict names each (`weak controls`).
"""

from __future__ import annotations

import asyncio
import random
import shlex
from dataclasses import replace

from factory.records import (
    Check,
    FlagKind,
    Reason,
    Task,
    TestSpec,
    TestStatus,
    Verdict,
    VerdictFlag,
)
from factory.sandbox.backend import DIFF_LIMIT
from factory.sandbox.printed import print_files, printed_files
from factory.verify import results
from factory.verify.frameworks import blindcheck, go_exec, javablind, jsblind, rust_exec
from factory.verify.frameworks.base import PRIVATE, TEST_UID, RootBuild, Trial, lock
from factory.verify.frameworks.blindcheck import Blind
from factory.verify.frameworks.canary import CANARIES, canary_names
from factory.verify.frameworks.copies import plant
from factory.verify.frameworks.copies.base import Copies

SCRATCH = "/tmp/factory-tests"
"""The tests' user's own folder: home, temp, build caches, and REPORT_DIR."""
REPORT_DIR = f"{SCRATCH}/report"
OUTPUT, EXIT, CANARY = f"{PRIVATE}/output", f"{PRIVATE}/exit", f"{PRIVATE}/canary"
SEEN = f"{SCRATCH}/blind-seen"
"""Where the blind checks' sender writes the values the tests computed (the tests' user's: root reads it after)."""
NO_CONTROLS = VerdictFlag(kind=FlagKind.weak_controls, detail=(
    "the command framework planted no canary (no test file of the repo to stand beside, or none for "
    "its language), no copies and no blind checks: the report its runner writes in the test process is believed"))
ONE_CANARY = VerdictFlag(kind=FlagKind.weak_controls, detail=(
    "the command framework plants one canary test that must fail, and no copies or blind checks: a report "
    "the code under test writes itself, having found the canary, is believed"))
MUST_FAIL = (TestStatus.failed, TestStatus.error)
AS_ROOT = VerdictFlag(kind=FlagKind.weak_controls, detail=(
    "the tests ran as root in a writable repo (tests.as_root: the image's runner needs it): the code under test "
    "could reach anything in the container"))


class CommandFramework:
    def readback(self, task: Task, touched: list[str]) -> str:
        return f"{plant.readback(task)}\n{rust_exec.readback(task)}"

    async def run(self, trial: Trial) -> Verdict:
        task, sandbox = trial.task, trial.sandbox
        spec = _checked(task)
        reader = results.reader(spec.results)  # an unknown reader fails before anything runs
        # pure CPU on a few test files: off the event loop, as pytest's planning is
        copies, weak = await asyncio.to_thread(plant.planned, task, trial.printed, random.SystemRandom())
        by_root = _root_build(task, trial)
        blinds = BLINDS.get(task.language)
        blind = await asyncio.to_thread(blinds.planned, task, plant.read_back(trial.printed), copies,
                                        random.SystemRandom()) if blinds else Blind()
        tests = {**copies.files, **blind.files}
        await sandbox.write_files({**trial.restored_files(), **{path: text.encode() for path, text in tests.items()},
                                   f"{PRIVATE}/run.sh": _script(task, trial, by_root, blind),
                                   **(blind.sender if blind.checks else {}),
                                   **(by_root.files if isinstance(by_root, RootBuild) else {})},
                                  owner="root")
        report = f"{REPORT_DIR}/{spec.report}" if spec.report else OUTPUT
        # root's command line names nothing of the run (it is readable in /proc while the tests run)
        command = f"sh {PRIVATE}/run.sh; {print_files([EXIT, report, OUTPUT, CANARY, SEEN], 'run')}"
        running = asyncio.ensure_future(sandbox.exec(command, timeout=trial.limit + 120, user="root",
                                                     output_limit=DIFF_LIMIT))
        flags = [*trial.flags, *([AS_ROOT] if spec.as_root else []), *([by_root] if isinstance(by_root, VerdictFlag) else [])]
        if not await trial.within_limit(running):
            return Verdict(resolved=False, reason=Reason.timeout, flags=flags, decided_by=Check.tests,
                           detail=f"the tests ran past the limit ({trial.limit:.0f} s)")
        result = running.result()
        printed = printed_files(result.output, "run", [EXIT, report, OUTPUT, CANARY, SEEN])
        code, text = _exit_code(printed[EXIT]), printed[report]
        canary = (printed[CANARY] or b"").decode(errors="replace").strip()
        flags += [weak] if weak else []
        flags += [] if copies.copies or blind.checks else [ONE_CANARY if canary else NO_CONTROLS]
        flags += [_readable(copies, blind.readable)] if blind.readable else []

        def done(**verdict) -> Verdict:
            return Verdict(flags=flags, controls=len(copies.copies), **verdict)

        if code == TIMED_OUT:
            return done(resolved=False, reason=Reason.timeout, decided_by=Check.tests,
                        detail=f"the tests ran past the limit ({trial.limit:.0f} s)")
        if text is None or result.truncated_bytes:
            tail = (printed[OUTPUT] or b"")[-1500:].decode(errors="replace")
            return done(resolved=False, reason=Reason.no_report, decided_by=Check.tests,
                        detail=f"no report at {spec.report or 'the output'} (exit {code}): {tail}")
        ran = plant.without_old_names(results.read(reader.name, text, exit_code=code), copies)
        read, unblind, sent_elsewhere = blindcheck.judge(ran, blind, printed[SEEN]) if blind.checks else (ran, {}, None)
        broken = any(p.code in (results.ProblemCode.build_failed, results.ProblemCode.suite_failed) for p in read.problems)
        # a patch that breaks the build leaves tests missing and is no forger; a planted test that passed is
        missed = (TestStatus.missing,) if broken else ()
        if read.ran and (sung := _canary_not_failed(read, canary, excused=missed)):
            return done(resolved=False, reason=Reason.tampered, decided_by=Check.tamper_probe,
                        detail=f"the canary test {sung}, planted to fail: the report is not that of the tests having run")
        if sent_elsewhere and read.ran:
            return done(resolved=False, reason=Reason.tampered, decided_by=Check.tamper_probe, detail=sent_elsewhere)
        if read.ran and (forged := plant.tampered(read, copies, excused=missed)):
            return done(resolved=False, reason=Reason.tampered, decided_by=Check.controls, detail=forged)
        graded = _graded(task, copies, read)
        flags += [VerdictFlag(kind=FlagKind.flaky, detail=test) for test in graded.flaky]
        if graded.passed:
            return done(resolved=True, tests=graded.tests, decided_by=Check.tests)
        reason = Reason.tests_failed if read.ran else Reason.no_report
        why = [f"{len(graded.failing)} not passed: {', '.join(graded.failing[:5])}"] if graded.failing else []
        first = plant.run_ids(copies, list(graded.failing[:1]))
        why += [f"{first[0]}: {unblind[first[0]]}"] if first and first[0] in unblind else []
        why += [f"{p.code.value}: {p.detail}" for p in graded.problems[:3]]
        return done(resolved=False, reason=reason, tests=graded.tests, decided_by=Check.tests,
                    detail="; ".join(why)[:2000])


TIMED_OUT = 124  # coreutils `timeout`


def _readable(copies: Copies, tests: list[str]) -> VerdictFlag:
    told = {run: test for test, run in copies.renamed.items()}
    return VerdictFlag(kind=FlagKind.weak_controls, detail=(
        "checks the blind-check rewrite cannot take (an object, a check the test may not reach) keep their expected "
        f"values readable to the code under test in: {', '.join(told.get(t, t) for t in tests)}"))


def _canary_not_failed(read: results.Results, planted: str, excused: tuple[TestStatus, ...]) -> str | None:
    """The first planted canary reported other than failed, with what it was reported. A canary
    line may name its suite after a tab (Go: one per package): a suite that reported no test did
    not run (the task's command names other packages) and is not asked for its canary."""
    for line in planted.splitlines():
        name, _, suite = line.partition("\t")
        if suite and not any(case.suite == suite for case in read.cases):
            continue
        status = results.status_of(read, name, suite or None)[0]
        if status not in (*MUST_FAIL, *excused):
            return f"{name}{f' in {suite}' if suite else ''} was reported {status.value}"
    return None


def _graded(task: Task, copies: Copies, read: results.Results) -> results.Grade:
    """SWE-bench's rule and stricter (`results.grade`) on the ids the tests ran under, told back
    in the task's own ids."""
    f2p, p2p = plant.run_ids(copies, task.FAIL_TO_PASS), plant.run_ids(copies, task.PASS_TO_PASS)
    graded = results.grade(f2p, p2p, read)
    told = {run: test for test, run in copies.renamed.items()}
    return replace(graded, tests={told.get(run, run): status for run, status in graded.tests.items()},
                   failing=tuple(told.get(run, run) for run in graded.failing),
                   flaky=tuple(told.get(run, run) for run in graded.flaky))


def _checked(task: Task) -> TestSpec:
    spec = task.tests
    if not spec.command or not spec.results:
        raise ValueError(f"task {task.instance_id}: the command framework needs tests.command and tests.results")
    return spec


TESTS_ENVIRONMENT = " ".join([
    f"HOME={SCRATCH}/home", f"TMPDIR={SCRATCH}/tmp", f"REPORT_DIR={REPORT_DIR}", f"GOCACHE={SCRATCH}/go-build",
    f"GOPATH={SCRATCH}/go", "GOTOOLCHAIN=local", f"CARGO_TARGET_DIR={SCRATCH}/target",
    f"CARGO_HOME={SCRATCH}/cargo", "CARGO_NET_OFFLINE=true", f"npm_config_cache={SCRATCH}/npm", "CI=1", "LANG=C.UTF-8",
])
"""What the tests' processes see: their own folders, no network caches, nothing of the job."""


BLINDS = {"javascript": jsblind, "typescript": jsblind, "java": javablind}
"""Languages whose expected values stay on the host, by the module that plans their blind checks."""


def _root_build(task: Task, trial: Trial) -> RootBuild | VerdictFlag | None:
    """How root compiles the tests and the tests' user runs the binaries (None: the tests' user runs
    the command; a flag: it does, and the verdict says why)."""
    return (go_exec.root_build(task, _run(task, trial), TESTS_ENVIRONMENT)
            or rust_exec.root_build(task, trial.printed, trial.restore, trial.touched, _timed(trial), TESTS_ENVIRONMENT))


def _timed(trial: Trial) -> str:
    return f"timeout -k 5 {int(trial.limit)}"


def _run(task: Task, trial: Trial) -> str:
    return f"{_timed(trial)} sh -c {shlex.quote(task.tests.command)} < /dev/null"


def _script(task: Task, trial: Trial, by_root: RootBuild | VerdictFlag | None, blind: Blind) -> str:
    """Root's script: set up, run the command as the tests' user (or root's build, which runs only
    the binaries as the tests' user), stop whatever it left."""
    w, s = shlex.quote(task.workdir), SCRATCH
    as_tests = f"setpriv --reuid={TEST_UID} --regid={TEST_UID} --clear-groups"
    run = _run(task, trial)
    # the sender's environment, and the file it writes
    blind_env = f"{blind.environment} FACTORY_BLIND_SEEN={SEEN}" if blind.checks else ""
    lines = ["set -u", f"cd {w}", *(f"rm -f -- {shlex.quote(p)}" for p in trial.removed()),
             f"rm -rf {s} && mkdir -p {s}/home {s}/tmp {REPORT_DIR}", f"chmod 700 /root {PRIVATE}"]
    lines += blind.setup if blind.checks else []
    if task.language in CANARIES:  # in a subshell of its own: a planter that finds nothing plants nothing
        lines.append(f"( {canary_names(task, random.SystemRandom())}; CANARY={CANARY}\n{CANARIES.get(task.language)}\n)")
    if task.tests.as_root:  # the image's own environment (root's caches, a writable repo); its own session
        lines += [f"env REPORT_DIR={REPORT_DIR} CI=1 {blind_env} setsid {run} > {OUTPUT} 2>&1 & wait $!", f"echo $? > {EXIT}",
                  "kill -9 -- -$! 2>/dev/null"]
    else:
        root = by_root if isinstance(by_root, RootBuild) else None
        runner = root.runner if root else f"{as_tests} env -i PATH=\"$PATH\" {TESTS_ENVIRONMENT} {blind_env} {run}"
        lines += [
            *lock(w),  # the tests read the repo and change nothing in it
            f"chown -R {TEST_UID}:{TEST_UID} {s}",
            *(root.setup if root else []),
            # the output reaches its file through a pipe root reads: the tests hold only the pipe's
            # end, so they cannot seek back, truncate or rewrite what was already written
            f"mkfifo -m 600 {OUTPUT}.pipe", f"cat {OUTPUT}.pipe > {OUTPUT} & reader=$!",
            f"{runner} > {OUTPUT}.pipe 2>&1", f"echo $? > {EXIT}",
            f"{as_tests} kill -9 -1 2>/dev/null",  # every process of the tests' user: none writes after this
            "wait $reader",
        ]
    return "\n".join([*lines, "true"]) + "\n"


def _exit_code(data: bytes | None) -> int | None:
    try:
        return int((data or b"").strip())
    except ValueError:
        return None
