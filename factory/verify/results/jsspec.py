"""Console output of JavaScript runners: jest and vitest `--verbose`, mocha's spec reporter,
`node --test`'s spec reporter.

    PASS src/query.test.js                    (jest: the file)
      builder                                 (a describe block, by indentation)
        ✓ builds the correct query (105 ms)
        ✕ escapes quotes (3 ms)
        ○ skipped handles unicode
    ▶ nested                                  (node: a suite)
      ✔ first (1.2ms)
    ✓ src/a.test.ts > math > adds 2ms         (vitest: the whole path on one line)

A test's id is its describe path and title joined by ` › ` (jest's own separator); the bare
title (what SWE-bench's `parse_log_jest` keys on), the ` > ` path (vitest, karma) and the
space-joined path (jest `fullName`, mocha `fullTitle`) are aliases. Durations, ANSI colours
and indentation are stripped. Recaps that repeat a failure (jest's `●` blocks, node's
`✖ failing tests:`, mocha's numbered details after `N passing`) are not read twice.

Text is forgeable: any test can print `✓ other test`; jest's `--json`, mocha's json reporter
and the JUnit reporters are the structured channels and come first.
"""

from __future__ import annotations

import re

from factory.records import TestStatus
from factory.verify.results.names import clean, strip_ansi
from factory.verify.results.record import Case, Counts, Problem, ProblemCode, Results

_GLYPHS = {
    "✓": TestStatus.passed, "✔": TestStatus.passed, "√": TestStatus.passed,
    "✕": TestStatus.failed, "✖": TestStatus.failed, "×": TestStatus.failed, "✗": TestStatus.failed,
    "○": TestStatus.skipped, "↓": TestStatus.skipped, "﹣": TestStatus.skipped, "-": TestStatus.skipped,
    "✎": TestStatus.skipped,
}
_CASE = re.compile(r"^(\s*)(" + "|".join(map(re.escape, _GLYPHS)) + r")\s+(.+)$")
_MOCHA_FAILED = re.compile(r"^(\s*)\d+\) (.+)$")
_FILE = re.compile(r"^(PASS|FAIL)\s+(\S.*?)(?:\s+\(\d[^)]*\))?$")
_SUITE = re.compile(r"^(\s*)▶\s+(.+)$")
_VITEST_FILE = re.compile(r"\(\d+ tests?(?:\s*\|[^)]*)?\)")
_VITEST_TIME = re.compile(r"\s+\d+(?:\.\d+)?\s*m?s$")
_SKIP_NOTE = re.compile(r"\s+(?:\[skipped\]|#\s*(?:SKIP|TODO)\b.*)$")
_RECAP = re.compile(r"^\s*(●\s|✖ failing tests:|Summary of all failing tests)")
_MOCHA_SUMMARY = re.compile(r"^\s*(\d+) (passing|failing|pending)\b")
_NODE_SUMMARY = re.compile(r"^ℹ (tests|pass|fail|skipped|todo) (\d+)$")
_JEST_SUMMARY = re.compile(r"^\s*Tests:?\s+(.*\d.*)$")


def read_js_spec(text: str) -> Results:
    cases: list[Case] = []
    found: list[Problem] = []
    stack: list[tuple[int, str]] = []
    suite, listing = "", True
    claim: dict[str, int] = {}
    for raw in text.splitlines():
        line = strip_ansi(raw).rstrip()
        if not line.strip():
            continue
        if m := _FILE.match(line):
            suite, stack, listing = m.group(2), [], True
        elif _summary(line, claim):
            listing = not _MOCHA_SUMMARY.match(line)  # mocha's failure details follow its summary
        elif _RECAP.match(line):
            listing = False
        elif "Bail out!" in line:
            found.append(Problem(ProblemCode.bailed, line.strip()))
        elif not listing:
            continue
        elif m := _CASE.match(line) or _MOCHA_FAILED.match(line):
            indent, status, title = _parts(m)
            if _VITEST_FILE.search(title):
                continue  # vitest's per-file line, not a test
            stack = [(i, t) for i, t in stack if i < indent]
            cases.append(_case([t for _, t in stack], title, status, suite))
        elif m := _SUITE.match(line):
            indent, title = len(m.group(1)), clean(m.group(2))
            stack = [(i, t) for i, t in stack if i < indent] + [(indent, title)]
        elif (indent := len(line) - len(line.lstrip())) >= 2:  # a jest/mocha describe title
            stack = [(i, t) for i, t in stack if i < indent] + [(indent, clean(line))]
    return Results(cases=tuple(cases), claimed=_claimed(claim), found=tuple(found), structured=False)


def _parts(m: re.Match) -> tuple[int, TestStatus, str]:
    if m.re is _MOCHA_FAILED:
        return len(m.group(1)), TestStatus.failed, m.group(2)
    title = _SKIP_NOTE.sub("", _VITEST_TIME.sub("", m.group(3)))
    status = _GLYPHS[m.group(2)]
    if status == TestStatus.passed and _SKIP_NOTE.search(m.group(3)):
        status = TestStatus.skipped  # node: `✔ name # SKIP`
    return len(m.group(1)), status, title


def _case(ancestors: list[str], title: str, status: TestStatus, suite: str) -> Case:
    title = clean(title)
    if " > " in title:  # vitest prints the whole path: file > describe > test
        *ancestors, title = [clean(p) for p in title.split(" > ")]
        path = ancestors[1:] + [title]
        return Case(" > ".join([*ancestors, title]), status, suite=suite or ancestors[0],
                    aliases=(" > ".join(path), " › ".join(path), title))
    path = [*ancestors, title]
    return Case(" › ".join(path), status, suite=suite,
                aliases=tuple(dict.fromkeys((title, " > ".join(path), " ".join(path)))))


def _summary(line: str, claim: dict[str, int]) -> bool:
    if m := _NODE_SUMMARY.match(line):
        key = {"tests": "total", "pass": "passed", "fail": "failed"}.get(m.group(1), "skipped")
        claim[key] = claim.get(key, 0) + int(m.group(2))
        return True
    if m := _MOCHA_SUMMARY.match(line):
        key = {"passing": "passed", "failing": "failed", "pending": "skipped"}[m.group(2)]
        claim[key] = claim.get(key, 0) + int(m.group(1))
        claim["total"] = claim.get("total", 0) + int(m.group(1))
        return True
    if m := _JEST_SUMMARY.match(line):
        words = {"passed": "passed", "failed": "failed", "skipped": "skipped", "todo": "skipped",
                 "total": "total"}
        for n, word in re.findall(r"(\d+) (\w+)", m.group(1)):
            if word in words:
                claim[words[word]] = claim.get(words[word], 0) + int(n)
        if (total := re.search(r"\((\d+)\)\s*$", m.group(1))) and "total" not in claim:
            claim["total"] = int(total.group(1))  # vitest: `Tests  1 failed | 3 passed (4)`
        return True
    return False


def _claimed(claim: dict[str, int]) -> Counts | None:
    return Counts(**claim) if claim else None
