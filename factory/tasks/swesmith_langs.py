"""SWE-smith rows of every language: which language a row is in, and how its tests run.

SWE-smith's rows do not carry their test command: it lives in the repo's profile
(`swesmith/profiles/<language>.py` in SWE-bench/SWE-smith): a language default
(`GoProfile.test_cmd`, `RustProfile.test_cmd`) that some repos override. The commands and
readers below follow those profiles; docs/tasks.md says where each one changes the command.

A row names its language with `language` where it has one (local task sets); otherwise the
language is read from the row: pytest node ids in FAIL_TO_PASS make it Python (as every
SWE-smith row was before), else the files the bug patch touches.
"""

from __future__ import annotations

from typing import Any

from factory.records import TestSpec
from factory.tasks.fields import BadRow, Unsupported
from factory.tasks.patches import touched_files
from factory.tasks.runners import command_spec, language_name, patch_language

GO = "go test -v -count=1 ./..."
"""`GoProfile.test_cmd`; run as `go test -json -count=1 ./...` (runners.go_json)."""
RUST = "cargo test --verbose"
"""`RustProfile.test_cmd`; repos that override it are in RUST_REPOS."""
RUST_REPOS = {
    "clap-rs/clap": "make test-full ARGS=--verbose",
    "hyperium/hyper": "cargo test --verbose --features full",
    "rust-itertools/itertools": "cargo test --verbose --all-features",
    "tokio-rs/tokio": "cargo test --verbose --features full -- --skip try_exists",
    "uuid-rs/uuid": "cargo test --verbose --all-features",
    "rust-lang/mdBook": "cargo test --workspace --verbose",
    "BurntSushi/ripgrep": "cargo test --all --verbose",
}
JUNIT_REPORT = "junit.xml"
JAVA = (
    # SWE-smith's Java profiles run Gradle (`./gradlew test --rerun-tasks --continue ...`, then
    # `cat` of every TEST-*.xml) or Maven (`mvn test -B -T 1C ...`, read from the console). Both
    # write JUnit XML reports; the command gathers them into one file, read by `junit`, and
    # keeps the runner's own exit status.
    "if [ -x ./gradlew ]; then ./gradlew test --rerun-tasks --continue --no-daemon --console=plain; "
    "else mvn test -B -T 1C -Dsurefire.useFile=false -Dsurefire.printSummary=true; fi; status=$?; "
    "find . -type f -name 'TEST-*.xml' \\( -path '*/surefire-reports/*' -o -path '*/test-results/*' \\) "
    f"-exec cat {{}} + > \"$REPORT_DIR/{JUNIT_REPORT}\"; exit $status"
)
JS_REPOS = {
    # swesmith/profiles/javascript.py: each JavaScript repo has its own runner and parser.
    "diegomura/react-pdf": "./node_modules/.bin/vitest --no-color --reporter verbose",
    "markedjs/marked": "NO_COLOR=1 node --test",
    "babel/babel": "yarn jest --verbose",
    "anuraghazra/github-readme-stats": "npm test -- --verbose",
    "Automattic/mongoose": "npm test -- --verbose",
}
NO_READER = {
    "c": "C test output (ctest, custom runners) has no result reader yet",
    "cpp": "C++ test output (ctest, gtest, Catch2 console) has no result reader yet",
}


def language_of(row: dict[str, Any], f2p: list[str], bug_patch: str, iid: str) -> str:
    given = row.get("language")
    if given is not None:
        if not isinstance(given, str) or not given.strip():
            raise BadRow(iid, "language", "must be a language name such as go, rust, java")
        return language_name(given)
    if any(_pytest_id(t) for t in f2p):
        return "python"
    # No language to be read: load as every SWE-smith row loaded before languages (pytest).
    return patch_language(bug_patch) or "python"


def _pytest_id(test: str) -> bool:
    return test.split("::", 1)[0].endswith(".py")


def repo_key(row: dict[str, Any]) -> str:
    """`owner/repo` of a SWE-smith row (`repo` is `swesmith/owner__repo.commit8`)."""
    name = str(row.get("repo", "")).rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return name.replace("__", "/", 1)


def test_spec(language: str, row: dict[str, Any], bug_patch: str, iid: str) -> TestSpec:
    """How a SWE-smith row's tests run, from its repo's SWE-smith profile."""
    repo = repo_key(row)
    if language == "go":
        return command_spec(GO, "go-text")
    if language == "rust":
        return command_spec(RUST_REPOS.get(repo, RUST), "cargo")
    if language == "java":
        return command_spec(JAVA, "junit", report=JUNIT_REPORT)
    if language in ("javascript", "typescript") and repo in JS_REPOS:
        command = JS_REPOS[repo]
        if repo == "babel/babel":  # its profile runs only the packages the bug touches
            packages = dict.fromkeys("/".join(p.split("/")[:2]) for p in touched_files(bug_patch)
                                     if p.startswith("packages/") and p.count("/") >= 2)
            command = " ".join([command, *packages])
        return command_spec(command, "js-spec")
    if language in ("javascript", "typescript"):
        why = f"SWE-smith's profiles give each {language} repo its own runner, and factory knows none for {repo or '?'}"
    else:
        why = NO_READER.get(language, f"no test command or result reader for {language} yet")
    raise Unsupported(iid, "language", why, language=language)
