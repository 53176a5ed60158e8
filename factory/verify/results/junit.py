"""JUnit XML: Maven Surefire and Gradle `TEST-*.xml`, jest-junit, vitest's and mocha's junit
reporters, `node --test --test-reporter=junit`, gotestsum `--junitfile`, cargo-nextest, Catch2.

A `<testcase>` passed unless it holds `<failure>`, `<error>` or `<skipped>`; Surefire's
`<flakyFailure>`/`<flakyError>` alone mean it failed and then passed on a rerun (flaky),
`<rerunFailure>` beside a `<failure>` means it failed every time. Suites nest (Jenkins).
Several documents may be concatenated, as a `cat` of every `TEST-*.xml` gives them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from factory.records import TestStatus
from factory.verify.results import xmlsafe
from factory.verify.results.names import clean
from factory.verify.results.record import Case, Counts, Problem, ProblemCode, Results

_OUTCOMES = {"error": TestStatus.error, "failure": TestStatus.failed, "skipped": TestStatus.skipped}
_FLAKY = ("flakyFailure", "flakyError")


def read_junit(text: str) -> Results:
    cases: list[Case] = []
    claims: list[Counts] = []
    found: list[Problem] = []
    for i, doc in enumerate(xmlsafe.documents(text) or [text]):
        try:
            root = xmlsafe.parse(doc)
        except xmlsafe.HostileXml as exc:
            found.append(Problem(ProblemCode.hostile, f"document {i + 1}: {exc}"))
            continue
        except xmlsafe.MalformedXml as exc:
            found.append(Problem(ProblemCode.malformed, f"document {i + 1}: {exc}"))
            continue
        cases.extend(_cases(root, suite=root.get("name", "")))
        claims.append(_claim(root))
    if found:  # a report cut or forged in part is no evidence for the rest either
        return Results(found=tuple(found))
    return Results(cases=tuple(cases), claimed=_sum(claims))


def _cases(element: ET.Element, suite: str):
    for child in element:
        if child.tag in ("testsuite", "testsuites"):
            yield from _cases(child, child.get("name", suite))
        elif child.tag == "testcase":
            yield _case(child, suite)


def _case(element: ET.Element, suite: str) -> Case:
    tags = {child.tag for child in element}
    outcomes = [status for tag, status in _OUTCOMES.items() if tag in tags]
    status = outcomes[0] if outcomes else TestStatus.passed
    name = clean(element.get("name", ""))
    classname = clean(element.get("classname", ""))
    if not classname:
        return Case(name, status, suite=suite, flaky=not outcomes and bool(tags & set(_FLAKY)))
    return Case(
        f"{classname}.{name}", status, suite=suite or classname,
        # JUnit ids as task sets write them: SWE-bench's `Class#method`, Go's and cargo's bare
        # names (gotestsum, nextest put the package or binary in classname), jest-junit's path.
        aliases=(f"{classname}#{name}", f"{classname} › {name}", name),
        flaky=not outcomes and bool(tags & set(_FLAKY)),
    )


def _claim(root: ET.Element) -> Counts:
    """The root's own counts, else the sum of its top-level suites' (nested suites are inside
    their parent's counts)."""
    if root.get("tests") is not None:
        return _counts(root)
    return _sum([_counts(s) for s in root if s.tag == "testsuite"]) or Counts()


def _counts(element: ET.Element) -> Counts:
    def number(name: str) -> int | None:
        value = element.get(name)
        try:
            return int(value) if value is not None else None
        except ValueError:
            return None

    return Counts(total=number("tests"), failed=number("failures"), errors=number("errors"),
                  skipped=number("skipped"))


def _sum(claims: list[Counts]) -> Counts | None:
    if not claims:
        return None

    def total(name: str) -> int | None:
        values = [getattr(c, name) for c in claims]
        return None if all(v is None for v in values) else sum(v or 0 for v in values)

    return Counts(**{name: total(name) for name in ("total", "passed", "failed", "errors", "skipped")})
