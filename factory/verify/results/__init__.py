"""Result readers: a test runner's output -> `Results` (factory/verify/results/record.py),
pure functions with no Docker, and `grade` over them. docs/results.md.

    results = read("go-json", stream, exit_code=1)
    verdict = grade(task.FAIL_TO_PASS, task.PASS_TO_PASS, results)

Structured reports come first: they are written by the framework's own code (a JUnit file, the
`go test -json` stream), and text output (`cargo test`, `go test -v`, jest's verbose lines) is
forgeable by any test that prints. A new format is a module with a `read_*(text) -> Results`
and one `READERS.add` (a `factory.registry.Registry`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from factory.registry import Registry
from factory.verify.results.cargo import read_cargo
from factory.verify.results.gojson import read_go_json
from factory.verify.results.gotext import read_go_text
from factory.verify.results.grading import Grade, grade, status_of
from factory.verify.results.jsjson import read_jest_json, read_mocha_json
from factory.verify.results.jsspec import read_js_spec
from factory.verify.results.junit import read_junit
from factory.verify.results.record import Case, Counts, Problem, ProblemCode, Results
from factory.verify.results.tap import read_tap


@dataclass(frozen=True)
class ReaderSpec:
    name: str
    read: Callable[[str], Results]
    structured: bool
    """True: a report the framework itself writes. False: console text a test can print."""
    summary: str


READERS: Registry[ReaderSpec] = Registry("result reader")
for _spec in (
    ReaderSpec("junit", read_junit, True,
               "JUnit XML: Surefire/Gradle TEST-*.xml, jest-junit, vitest, mocha, node --test, gotestsum, nextest"),
    ReaderSpec("go-json", read_go_json, True, "go test -json events"),
    ReaderSpec("jest-json", read_jest_json, True, "jest --json (or a reporter's AggregatedResult)"),
    ReaderSpec("mocha-json", read_mocha_json, True, "mocha --reporter json"),
    ReaderSpec("cargo", read_cargo, False, "cargo test (libtest) console output"),
    ReaderSpec("go-text", read_go_text, False, "go test -v console output"),
    ReaderSpec("js-spec", read_js_spec, False, "jest/vitest --verbose, mocha spec, node --test spec output"),
    ReaderSpec("tap", read_tap, False, "TAP: node --test --test-reporter=tap"),
):
    READERS.add(_spec.name, _spec)


def reader(name: str) -> ReaderSpec:
    """`READERS.get`: an unknown name lists the valid ones."""
    return READERS.get(name)


def read(name: str, output: str | bytes, *, exit_code: int | None = None) -> Results:
    """Read a runner's output with reader `name`; `exit_code` only when it is the runner's own
    (not that of a script that ends in `|| true`)."""
    spec = reader(name)
    text = output.decode("utf-8", errors="replace") if isinstance(output, bytes) else output
    return replace(spec.read(text), exit_code=exit_code, structured=spec.structured)


__all__ = ["READERS", "Case", "Counts", "Grade", "Problem", "ProblemCode", "ReaderSpec", "Results",
           "grade", "read", "reader", "status_of"]
