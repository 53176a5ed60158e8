"""Multi-SWE-bench rows (multi-swe-bench/multi-swe-bench: `harness/dataset.py`, `pull_request.py`).

A row is a pull request: `org`, `repo`, `number`, `base` (`label`, `ref`, `sha`), the gold
`fix_patch`, the hidden `test_patch`, the issues it resolves, and its tests by transition, each a
dict of test name -> `{run, test, fix}` statuses: `p2p_tests` (pass before and after),
`f2p_tests` (fail), `s2p_tests` (skipped) and `n2p_tests` (absent before the fix). The harness
resolves a patch when each set's tests end as they did with the fix: all pass. So FAIL_TO_PASS
is f2p + s2p + n2p, and PASS_TO_PASS is p2p.

Its image is `mswebench/<org>_m_<repo>:pr-<number>` (lower case), the repo at `/home/<repo>`
on `base.sha`. The image also holds `/home/fix.patch` and `/home/test.patch` (hidden from the
agent), and `/home/run.sh`, the harness's own test command with no patch applied: the command.
"""

from __future__ import annotations

from typing import Any

from factory.records import StartState, Task
from factory.tasks import fields
from factory.tasks.fields import BadRow, Unsupported
from factory.tasks.runners import command_spec, language_name, patch_language

RUN = "bash /home/run.sh"
LEAKS = ["/home/fix.patch", "/home/test.patch"]
READERS = {"go": "go-text", "rust": "cargo"}
"""Languages whose per-repo `parse_log` names tests as a reader does: `--- PASS: TestX/sub` and
`test mod::name ... ok`. run.sh stays as the image has it, so Go's output is `go test -v` text."""


def task(row: dict[str, Any], source: str = "", test_cmd: str | None = None) -> Task:
    org, repo = _name(row, "org"), _name(row, "repo")
    number = row.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise BadRow(str(row.get("instance_id") or f"{org}__{repo}-?"), "number", "must be the pull request's number")
    iid = row.get("instance_id") if isinstance(row.get("instance_id"), str) and row["instance_id"] else f"{org}__{repo}-{number}"
    base = fields.mapping(row, "base", iid)
    sha = base.get("sha")
    if not isinstance(sha, str) or not sha:
        raise BadRow(iid, "base.sha", "field required")
    gold = fields.text(row, "fix_patch", iid)
    f2p = [t for key in ("f2p_tests", "s2p_tests", "n2p_tests") for t in _tests(row, key, iid)]
    fields.need_fail_to_pass(f2p, iid, "f2p_tests")
    given = fields.text(row, "lang", iid, required=False) or fields.text(row, "language", iid, required=False)
    language = language_name(given) if given else (patch_language(gold) or "unknown")
    if language not in READERS:
        raise Unsupported(iid, "lang", f"Multi-SWE-bench reads {language} tests with per-repo log parsers "
                          "that no result reader matches yet", language=language)
    return Task(
        instance_id=iid,
        repo=f"{org}/{repo}",
        problem_statement=_problem(row, iid),
        image=f"mswebench/{org}_m_{repo}".lower() + f":pr-{number}",
        workdir=f"/home/{repo}",
        start=StartState(base_commit=sha, hide_paths=list(LEAKS)),
        gold_patch=gold,
        test_patch=fields.text(row, "test_patch", iid),
        FAIL_TO_PASS=f2p,
        PASS_TO_PASS=_tests(row, "p2p_tests", iid),
        test_cmd=test_cmd,
        language=language,
        tests=command_spec(RUN, READERS[language]),
        source=f"multi-swe-bench:{source}" if source else "multi-swe-bench",
    )


def _name(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value or "/" in value:
        raise BadRow(str(row.get("instance_id") or "<no instance_id>"), key, "field required (a GitHub name)")
    return value


def _tests(row: dict[str, Any], key: str, iid: str) -> list[str]:
    """A test dict's names, in the row's order (a JSON string of one is read too)."""
    tests = fields.mapping(row, key, iid, required=False)
    if not all(isinstance(v, dict) for v in tests.values()):
        raise BadRow(iid, key, "must map each test name to its {run, test, fix} statuses")
    return list(tests)


def _problem(row: dict[str, Any], iid: str) -> str:
    """The resolved issues' titles and bodies (as Multi-SWE-bench's agents are prompted), else the PR's."""
    issues = row.get("resolved_issues") or []
    if not isinstance(issues, list) or not all(isinstance(i, dict) for i in issues):
        raise BadRow(iid, "resolved_issues", "must be a list of {number, title, body}")
    parts = [f"{i.get('title') or ''}\n\n{i.get('body') or ''}".strip() for i in issues]
    text = "\n\n".join(p for p in parts if p) or f"{row.get('title') or ''}\n\n{row.get('body') or ''}".strip()
    if not text:
        raise BadRow(iid, "resolved_issues", "no issue text and no pull request title or body")
    return text
