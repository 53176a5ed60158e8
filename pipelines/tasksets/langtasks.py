"""Generate (or check) `tasks.jsonl` of a demo task set in another language than Python.

Each task set's `make_tasks.py` writes down its bugs as text edits (file, old snippet, new
snippet) plus the issue a user would file about each, and calls `main`. For each bug this:

1. copies the clean repo, applies the edits and takes the bug `patch` with `git diff`;
2. runs the suite on the clean repo and on each bugged copy inside the task set's toolchain image
   (`taskset.json`'s `base_image`, no network), reads the report with the task's result reader
   (`factory.verify.results`) and derives FAIL_TO_PASS (passes clean, fails bugged) and
   PASS_TO_PASS (passes in both), so the names are exactly what the reader reports;
3. refuses the task set if the clean suite is not green, or a bug breaks no test (or more than 5).

Rows are SWE-smith's schema plus `language` and `tests` (TestSpec), in the order of the bugs,
so a rerun on unchanged sources writes the same bytes.

    python pipelines/tasksets/demo-go/make_tasks.py            # write tasks.jsonl
    python pipelines/tasksets/demo-go/make_tasks.py --check    # fail if it is out of date
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # factory's readers, from a checkout

from factory.verify.results import read  # noqa: E402

MAX_FAIL_TO_PASS = 5
CREATED_AT = "2025-06-01T00:00:00"


@dataclass(frozen=True)
class Edit:
    """Replace the one occurrence of `old` in `path` (relative to the repo root) with `new`."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Bug:
    slug: str
    kind: str
    problem_statement: str
    edits: list[Edit] = field(default_factory=list)


@dataclass(frozen=True)
class TaskSet:
    folder: Path
    repo: str
    """`repos/<repo>` of the folder; the task `repo` is `factory-demo/<repo>`."""
    language: str
    tests: dict[str, str]
    """The rows' `tests`: framework, command, results, report (factory.records.TestSpec)."""
    image: str
    bugs: list[Bug]

    @property
    def base_image(self) -> str:
        return json.loads((self.folder / "taskset.json").read_text())["base_image"]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _bug_patch(ts: TaskSet, bug: Bug) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / ts.repo
        shutil.copytree(ts.folder / "repos" / ts.repo, work)
        _git(work, "init", "-q")
        _git(work, "add", "-A")
        _git(work, "-c", "user.name=f", "-c", "user.email=f@f", "commit", "-q", "-m", "clean")
        for edit in bug.edits:
            path = work / edit.path
            text = path.read_text()
            if text.count(edit.old) != 1:
                sys.exit(f"{bug.slug}: {edit.old!r} occurs {text.count(edit.old)} times in {edit.path}")
            path.write_text(text.replace(edit.old, edit.new))
        return _git(work, "diff")


# One container runs the clean suite, then each bug applied and reverted with git.
RUNNER = r"""
set -u
cp -r /src /tmp/repo && cd /tmp/repo
git init -q && git add -A && git -c user.name=f -c user.email=f@f commit -q -m clean
export REPORT_DIR=/tmp/report-dir TMPDIR=/tmp  # as the verifier's command framework runs it
run() {
  rm -rf "$REPORT_DIR" && mkdir -p "$REPORT_DIR"
  bash -c "$COMMAND" > /tmp/out 2>&1; code=$?
  if [ -n "$REPORT" ]; then cat "$REPORT_DIR/$REPORT" > /tmp/report 2>/dev/null
  else cp /tmp/out /tmp/report; fi
  echo "=== $1 $code $(base64 -w0 < /tmp/report)"
}
run clean
for p in /patches/*.diff; do
  git apply "$p" && run "$(basename "$p" .diff)"
  git checkout -q -- . && git clean -fdxq
done
"""


def _run_all(ts: TaskSet, patches: dict[str, str]) -> dict[str, tuple[int, str]]:
    import base64

    with tempfile.TemporaryDirectory() as tmp:
        pdir = Path(tmp) / "patches"
        pdir.mkdir()
        for slug, patch in patches.items():
            (pdir / f"{slug}.diff").write_text(patch)
        report = ts.tests.get("report", "")
        out = subprocess.run(
            ["docker", "run", "--rm", "--network", "none",
             "-v", f"{ts.folder / 'repos' / ts.repo}:/src:ro", "-v", f"{pdir}:/patches:ro",
             "-e", f"COMMAND={ts.tests['command']}", "-e", f"REPORT={report}", ts.base_image, "bash", "-c", RUNNER],
            check=True, capture_output=True, text=True).stdout
    runs = {}
    for line in out.splitlines():
        if line.startswith("=== "):
            _, name, code, data = (line.split(" ", 3) + [""])[:4]
            runs[name] = (int(code), base64.b64decode(data).decode(errors="replace"))
    return runs


def _statuses(ts: TaskSet, run: tuple[int, str]) -> dict[str, str]:
    results = read(ts.tests["results"], run[1], exit_code=run[0])
    out: dict[str, str] = {}
    for case in results.cases:  # a test reported twice keeps its worst report
        if out.get(case.id, "passed") == "passed":
            out[case.id] = case.status.value
    return out


def rows(ts: TaskSet) -> list[dict]:
    patches = {bug.slug: _bug_patch(ts, bug) for bug in ts.bugs}
    runs = _run_all(ts, patches)
    clean = _statuses(ts, runs["clean"])
    broken = [name for name, status in clean.items() if status != "passed"]
    if not clean or broken or runs["clean"][0] != 0:
        sys.exit(f"{ts.repo}: the clean suite is not green (exit {runs['clean'][0]}, not passing: {broken})\n"
                 f"{runs['clean'][1][-3000:]}")
    out = []
    for bug in ts.bugs:
        if bug.slug not in runs:
            sys.exit(f"{bug.slug}: its patch did not apply")
        bugged = _statuses(ts, runs[bug.slug])
        f2p = [name for name in clean if bugged.get(name) != "passed"]
        p2p = [name for name in clean if bugged.get(name) == "passed"]
        if not 0 < len(f2p) <= MAX_FAIL_TO_PASS:
            sys.exit(f"{bug.slug}: breaks {len(f2p)} tests ({f2p[:8]}); want 1 to {MAX_FAIL_TO_PASS}")
        out.append({
            "instance_id": f"factory-demo__{ts.repo}.{bug.slug}",
            "repo": f"factory-demo/{ts.repo}",
            "patch": patches[bug.slug],
            "FAIL_TO_PASS": f2p,
            "PASS_TO_PASS": p2p,
            "image_name": ts.image,
            "problem_statement": bug.problem_statement.strip() + "\n",
            "created_at": CREATED_AT,
            "base_commit": None,
            "language": ts.language,
            "tests": ts.tests,
            "bug_kind": bug.kind,
        })
    return out


def main(ts: TaskSet) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if tasks.jsonl is out of date")
    args = parser.parse_args()
    text = "".join(json.dumps(row) + "\n" for row in rows(ts))
    path = ts.folder / "tasks.jsonl"
    if args.check:
        if not path.exists() or path.read_text() != text:
            sys.exit(f"{path} is out of date: rerun {ts.folder / 'make_tasks.py'}")
        print(f"{path}: up to date")
        return
    path.write_text(text)
    print(f"wrote {len(ts.bugs)} tasks to {path}")
