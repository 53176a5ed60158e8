"""The `command` framework's side of the copies: what it reads back, how it plans, how it judges.

    readback  the language's test files (git's listing, untracked hidden tests too) that hold a
              FAIL_TO_PASS test's needle, then the test files beside them, printed in the apply exec
    planned   the writer's `Copies` for those files, and the flag naming the tests left without copies
    run_ids   the ids the task's tests are reported under once originals are renamed
    tampered  a copy whose original passed and that did not fail: the report is not the tests'
    hider     the agent's view of the start state: the same files read, the FAIL_TO_PASS tests taken out
"""

from __future__ import annotations

import json
import random
import shlex
from dataclasses import replace

from factory.records import FlagKind, Task, TestStatus, VerdictFlag
from factory.sandbox.backend import Rewrite
from factory.sandbox.git import GIT
from factory.sandbox.printed import print_files, print_listed, printed_files
from factory.verify import results
from factory.verify.frameworks.base import PRIVATE
from factory.verify.frameworks.copies.base import COPY_WRITERS, Copies, CopyWriter
from factory.verify.results.names import clean

HIDE_SCRATCH = "/tmp/factory-hide"
"""Where the agent's sandbox lists its test files while they are hidden (root's, removed after)."""
MAX_FILES = 40
"""Test files read back at most (those holding a needle first)."""
MAX_BYTES = 512 * 1024
"""A test file larger than this is not read back (and gets no copies)."""
MUST_FAIL = (TestStatus.failed, TestStatus.error)


def readback(task: Task) -> str:
    """Bash (root, in the repo, the patches applied) that prints the files the writer plans in."""
    if task.language not in COPY_WRITERS or not task.FAIL_TO_PASS or selects_by_name(task):
        return ":"
    return _print_test_files(COPY_WRITERS.get(task.language), task, PRIVATE)


def hider(task: Task) -> Rewrite | None:
    """The agent's view of a task's start state without its FAIL_TO_PASS tests (their units taken
    out of their files, `CopyWriter.hide`), as Python's SWE-smith tasks hide their test files: a
    forger cannot spare a test by a body or a name it never saw. None where there is nothing to
    hide: no writer for the language, or the hidden tests come with a test patch."""
    if task.language not in COPY_WRITERS or not task.FAIL_TO_PASS or task.test_patch:
        return None
    writer = COPY_WRITERS.get(task.language)
    # before the start commit the work tree is in the factory's own git dir, not yet in `.git`
    return Rewrite(readback=_print_test_files(writer, task, HIDE_SCRATCH, git=GIT) + f"\nrm -rf {HIDE_SCRATCH}",
                   files=lambda printed: writer.hide(read_back(printed), list(task.FAIL_TO_PASS)),
                   key=json.dumps([task.language, list(task.FAIL_TO_PASS)]))


def _print_test_files(writer: CopyWriter, task: Task, scratch: str, git: str = "git") -> str:
    needles = [writer.needle(test) for test in task.FAIL_TO_PASS]
    specs = " ".join(shlex.quote(g if g.startswith(":(") else f":(glob){g}") for g in writer.globs)
    all_files, hits, listing = f"{scratch}/copy-all", f"{scratch}/copy-hits", f"{scratch}/copy-files"
    if None in needles:  # a test with nothing to look for: every test file may hold it
        find = f"cp {all_files} {hits}"
    else:
        find = f"xargs -0 -r grep -lZF {' '.join('-e ' + shlex.quote(n) for n in dict.fromkeys(needles))} -- " \
               f"< {all_files} > {hits}"
    folder = 'd=${f%/*}; [ "$d" = "$f" ] && d=.'
    # then the files declaring what a site needs, wherever they are (capped with the rest)
    declared = f"xargs -0 -r grep -lZE -e {shlex.quote(writer.declares)} -- < {all_files} || :; " if writer.declares else ""
    return "\n".join([
        f"mkdir -p {scratch} && chmod 700 {scratch}",
        f"{git} ls-files -z --cached --others --exclude-standard -- {specs} > {all_files} 2>/dev/null || : > {all_files}",
        find + " || :",
        # the folders of the hits, then every test file in them: a Go package's other files declare
        # names a copy must not take
        f"while IFS= read -r -d '' f; do {folder}; printf '%s\\n' \"$d\"; done < {hits} | sort -u > {hits}.dirs",
        f"{{ cat {hits}; while IFS= read -r -d '' f; do {folder}; "
        f"if grep -qxF -- \"$d\" {hits}.dirs; then printf '%s\\0' \"$f\"; fi; done < {all_files}; {declared}}} "
        f"| while IFS= read -r -d '' f; do [ \"$(stat -c %s -- \"$f\" 2>/dev/null || echo 0)\" -le {MAX_BYTES} ] "
        f"&& printf '%s\\0' \"$f\"; done | head -z -n {MAX_FILES * 2} > {listing}",
        print_files([listing], "copy-listing"),
        print_listed(listing, "copies"),
    ])


def read_back(printed: str) -> dict[str, str]:
    """Path -> text of the test files `_print_test_files` printed (a file that is not text is left out)."""
    # headers name files by their place, so the listing reads back under any name
    listing = printed_files(printed, "copy-listing", ["listing"])["listing"] or b""
    # a path may be listed twice (a hit, and again beside a hit): each place has its own printed file
    paths = [p.decode(errors="surrogateescape") for p in listing.split(b"\0") if p]
    files: dict[str, str] = {}
    for path, data in printed_files(printed, "copies", paths).items():
        if data is not None and len(files) < MAX_FILES:
            try:
                files[path] = data.decode()
            except UnicodeDecodeError:
                continue  # not text: no copies in it
    return files


def planned(task: Task, printed: str, rng: random.Random) -> tuple[Copies, VerdictFlag | None]:
    """The copies for this verification, from what `readback` printed, and the flag that says
    what they leave weak (None: every FAIL_TO_PASS test has copies)."""
    if task.language not in COPY_WRITERS:
        return Copies(), _weak(f"no writer of copies for {task.language} tests")
    if selects_by_name(task):
        return Copies(), _weak("the test command selects tests by name: copies under new names would not run")
    files = read_back(printed)
    ids = list(dict.fromkeys([*task.FAIL_TO_PASS, *task.PASS_TO_PASS]))
    copies = COPY_WRITERS.get(task.language).plan(files, list(task.FAIL_TO_PASS), ids, rng)
    if copies.uncopied:
        return copies, VerdictFlag(kind=FlagKind.no_copies, detail=", ".join(copies.uncopied[:10]))
    return copies, None


def selects_by_name(task: Task) -> bool:
    """Whether the test command names tests (`go test -run TestX`, `cargo test parse`, `--grep`):
    a copy or a renamed original would then not run, and a correct fix would look forged."""
    command = task.tests.command or ""
    units = {_unit(test) for test in (*task.FAIL_TO_PASS, *task.PASS_TO_PASS)}
    return any(len(unit) >= 4 and unit in command for unit in units)


def _unit(test_id: str) -> str:
    """The name a command would select a test by: Go's top-level test, a method, a path's last part."""
    head = test_id.split("/")[0] if test_id.startswith("Test") else test_id
    return head.rstrip("()").replace("::", ".").replace("#", ".").split(".")[-1].split(" ")[-1]


def run_ids(copies: Copies, ids: list[str]) -> list[str]:
    return [copies.renamed.get(test, test) for test in ids]


def without_old_names(read: results.Results, copies: Copies) -> results.Results:
    """`read` without the cases reported under an original's old name: no test runs under it
    any more, so only the code under test can have reported it."""
    old = {clean(test) for test in copies.renamed}
    kept = tuple(case for case in read.cases if not old & set(case.ids))
    return replace(read, cases=kept)


def tampered(read: results.Results, copies: Copies, excused: tuple[TestStatus, ...] = ()) -> str | None:
    """Why the report is not the tests' own: a copy whose original passed did not fail (`excused`:
    statuses that say nothing here, as `missing` when a package did not build)."""
    for copy, original in copies.copies.items():
        if results.status_of(read, copies.renamed.get(original, original))[0] is not TestStatus.passed:
            continue
        status = results.status_of(read, copy)[0]
        if status not in (*MUST_FAIL, *excused):
            return (f"a copy of hidden test {original} with one expected value changed was reported "
                    f"{status.value}, while its original passed: the report is not that of the tests having run")
    return None


def _weak(why: str) -> VerdictFlag:
    return VerdictFlag(kind=FlagKind.weak_controls, detail=f"command framework: {why}")
