"""How a task set's test runs map onto factory's: a harness log parser -> a `TestSpec`.

SWE-bench (v5 / Multilingual) and SWE-rebench V2 rows name the log parser that reads their
test output (`parse_log_gotest`, `parse_log_cargo`, ...). Each parser below is matched to the
result reader (`factory.verify.results`) that reads the same output and names the tests the same
way; a parser with no such reader makes the row `Unsupported`, skipped and counted.

Where the same run can give a structured report without changing what runs, the command is
rewritten to give it: `go test -v` becomes `go test -json` (the same tests, the same names,
`go test -json` implies `-v`), read by `go-json` rather than from console text a test can print.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath

from factory.records import TestSpec
from factory.tasks.fields import Unsupported
from factory.tasks.patches import touched_files


@dataclass(frozen=True)
class Runner:
    language: str
    framework: str = "command"
    results: str = ""
    """The result reader; empty for the `pytest` framework, which reads its own report."""


LOG_PARSERS: dict[str, Runner] = {
    # pytest's `-rA` summary names tests by node id: factory's own pytest framework runs them.
    "parse_log_pytest": Runner("python", "pytest"),
    "parse_log_pytest_options": Runner("python", "pytest"),
    "parse_log_pytest_v2": Runner("python", "pytest"),
    "parse_log_pytest_nebo": Runner("python", "pytest"),
    "parse_log_gotest": Runner("go", results="go-text"),
    "parse_log_cargo": Runner("rust", results="cargo"),
    "parse_log_jest": Runner("javascript", results="js-spec"),
    "parse_log_vitest": Runner("javascript", results="js-spec"),
    "parse_log_jest_json": Runner("javascript", results="jest-json"),
    "parse_log_tap": Runner("javascript", results="tap"),
}
"""Harness log parsers factory has a reader for. Left out on purpose: parsers whose test names
no reader gives (`parse_log_maven` pairs `-Dtest=` lines with BUILD SUCCESS; Gradle's console;
`parse_combined_test_reports` names JUnit cases `class::name`), Django's and SymPy's own
runners, and languages without a reader (C/C++, PHP, Ruby, ...)."""


def spec_for_parser(parser: str, command: str, *, iid: str, field: str, language: str) -> TestSpec:
    """The TestSpec of a run read by harness log parser `parser`; Unsupported when none fits."""
    runner = LOG_PARSERS.get(parser)
    if runner is None:
        raise Unsupported(iid, field, f"no result reader for log parser {parser!r} ({language or 'language not given'}); "
                          f"factory reads: {', '.join(LOG_PARSERS)}", language=language or "unknown")
    if runner.framework == "pytest":
        return TestSpec()
    if not command.strip():
        raise Unsupported(iid, field, "no test command to run", language=language or runner.language)
    return command_spec(command, runner.results)


def command_spec(command: str, results: str, report: str = "", as_root: bool = True) -> TestSpec:
    """A `command` TestSpec; `go test -v` console output becomes `go test -json` where safe.

    Published task sets' images are made for root (module and package caches under /root, builds
    that write into the repo, run scripts that assume it), so their commands run as root
    (`TestSpec.as_root`), and their verdicts say it."""
    if results == "go-text" and (as_json := go_json(command)) is not None:
        command, results = as_json, "go-json"
    return TestSpec(framework="command", command=command, results=results, report=report, as_root=as_root)


_SEPARATORS = re.compile(r"(&&|\|\||;|\n)")
_PLAIN_V = re.compile(r"(?<=\s)-v(?=\s|$)")


def go_json(command: str) -> str | None:
    """`command` with each `go test ... -v` as `go test ... -json`, or None when that is not
    safe to say: output piped or redirected (its reader expects text), or a `go test` without `-v`."""
    unpiped = command.replace("||", "")
    if any(c in unpiped for c in "|<>`") or "$(" in command or "go test" not in command:
        return None
    parts = _SEPARATORS.split(command)
    for i, part in enumerate(parts):
        if "go test" in part:
            if "-json" in part.split():
                continue
            if not _PLAIN_V.search(part):
                return None
            parts[i] = _PLAIN_V.sub("-json", part, count=1)
    return "".join(parts)


EXTENSIONS = {
    ".py": "python", ".go": "go", ".rs": "rust", ".java": "java",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".c": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".rb": "ruby", ".php": "php", ".cs": "csharp", ".kt": "kotlin", ".scala": "scala", ".swift": "swift",
}
"""A source file's language, as task sets name languages. A `.h` header counts only when a patch
touches nothing else (it is C's or C++'s alike)."""


def patch_language(patch: str) -> str | None:
    """The language most of a patch's files are in; None when none has a known extension."""
    suffixes = [PurePosixPath(path).suffix.lower() for path in touched_files(patch)]
    counts = Counter(EXTENSIONS[s] for s in suffixes if s in EXTENSIONS)
    if counts:
        return counts.most_common(1)[0][0]
    return "c" if ".h" in suffixes else None


ALIASES = {"golang": "go", "js": "javascript", "ts": "typescript", "c++": "cpp", "c#": "csharp", "py": "python"}
"""Language names task sets use (Multi-SWE-bench's `golang`, `ts`; SWE-rebench's `ts`) as factory names them."""


def language_name(given: str) -> str:
    name = given.strip().lower()
    return ALIASES.get(name, name)
