"""TAP, as `node --test --test-reporter=tap` writes it (and tape, node-tap).

    # Subtest: nested
        # Subtest: first
        ok 1 - first
        not ok 2 - second
    ok 1 - nested
      ---
      type: 'suite'
      ...

Nesting is by indentation under `# Subtest:`; a test's id is its path joined by ` > `, its bare
title an alias. node reports describe blocks as results of `type: 'suite'`: they are not
tests (node's own `# tests` count leaves them out). `# SKIP` and `# TODO` results are skipped;
`Bail out!` stops the run (`bailed`): the tests after it are missing. TAP is text the code
under test can print into; the JUnit reporter is the structured channel.
"""

from __future__ import annotations

import re

from factory.records import TestStatus
from factory.verify.results.names import clean, strip_ansi
from factory.verify.results.record import Case, Counts, Problem, ProblemCode, Results

_RESULT = re.compile(r"^(\s*)(ok|not ok)\b(?:\s+\d+)?(?:\s+-)?\s*(.*?)(?:\s+#\s*(SKIP|TODO)\b.*)?$", re.I)
_SUBTEST = re.compile(r"^(\s*)# Subtest: (.+)$")
_SUMMARY = re.compile(r"^# (tests|pass|fail|skipped|todo) (\d+)$")


def read_tap(text: str) -> Results:
    cases: list[Case] = []
    found: list[Problem] = []
    stack: list[tuple[int, str]] = []
    claim: dict[str, int] = {}
    in_yaml, last = False, None
    for raw in text.splitlines():
        line = strip_ansi(raw).rstrip()
        stripped = line.strip()
        if in_yaml:
            if stripped == "...":
                in_yaml = False
            elif stripped == "type: 'suite'" and last is not None and cases and cases[-1] is last:
                cases.pop()  # a describe block, not a test
                last = None
            continue
        if stripped == "---":
            in_yaml = True
        elif m := _SUBTEST.match(line):
            indent = len(m.group(1))
            stack = [(i, t) for i, t in stack if i < indent] + [(indent, clean(m.group(2)))]
        elif m := _RESULT.match(line):
            indent, title = len(m.group(1)), clean(m.group(3))
            stack = [(i, t) for i, t in stack if i < indent]
            status = (TestStatus.skipped if m.group(4) else
                      TestStatus.passed if m.group(2).lower() == "ok" else TestStatus.failed)
            path = [t for _, t in stack] + [title]
            last = Case(" > ".join(path), status, aliases=(title,) if len(path) > 1 else ())
            cases.append(last)
        elif stripped.startswith("Bail out!"):
            found.append(Problem(ProblemCode.bailed, stripped))
        elif m := _SUMMARY.match(line):
            key = {"tests": "total", "pass": "passed", "fail": "failed"}.get(m.group(1), "skipped")
            claim[key] = claim.get(key, 0) + int(m.group(2))
    return Results(cases=tuple(cases), claimed=Counts(**claim) if claim else None,
                   found=tuple(found), structured=False)
