"""A task's language as the agent meets it: the toolchain its image has, the command that runs
its tests, and what the scripted agent needs to act in it (file extensions, comments, how a
definition reads).

The prompts (factory/agent/prompts.py) name the language, its toolchain and the test command;
the scripted teacher (factory/teachers/playbook.py) greps, reads and checks with the same ones,
so an agent is never told to run pytest in a Go repository. A language without an entry here
gets a generic one (its name, the image's toolchain, the task's command): a new language needs
no entry to run, only to be described better.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from factory.records import Task

REPORT_DIR = "/tmp/factory-report"
"""`$REPORT_DIR` in the agent's shells, for test commands that write their report there (the
verifier gives the tests a folder of their own; the agent gets this one)."""


@dataclass(frozen=True)
class Toolchain:
    name: str
    """The language as the prompt names it: `Go`, `Rust`, ..."""
    tools: str
    """What the sandbox has for it, in the words of the system prompt."""
    extensions: tuple[str, ...]
    """Source file extensions, without the dot (the scripted agent's `find` and `grep --include`)."""
    comment: str
    """What starts a line comment."""
    definition: str
    """A regex whose (first matched) group is the name a definition introduces: a function, type, method."""

    def defined_name(self, line: str) -> str | None:
        match = re.search(self.definition, line)
        return next((name for name in match.groups() if name), None) if match else None


_C_LIKE = "//"
TOOLCHAINS: dict[str, Toolchain] = {
    "python": Toolchain("Python", "Python 3 and pytest", ("py",), "#",
                        r"\b(?:def|class)\s+([A-Za-z_]\w*)"),
    "go": Toolchain("Go", "the Go toolchain (`go build`, `go test`, `go vet`, `gofmt`), with no module proxy",
                    ("go",), _C_LIKE, r"\b(?:func(?:\s*\([^)]*\))?|type)\s+([A-Za-z_]\w*)"),
    "javascript": Toolchain("JavaScript", "Node.js and the repository's test runner, with no npm registry",
                            ("js", "mjs", "cjs"), _C_LIKE,
                            r"\b(?:function\s*\*?|class)\s+([A-Za-z_$][\w$]*)|\b([A-Za-z_$][\w$]*)\s*=\s*(?:function|\()"),
    "typescript": Toolchain("TypeScript", "Node.js, the TypeScript compiler and the repository's test runner, "
                            "with no npm registry", ("ts", "tsx", "js"), _C_LIKE,
                            r"\b(?:function\s*\*?|class|interface|type)\s+([A-Za-z_$][\w$]*)"),
    "java": Toolchain("Java", "a JDK (`javac`, `java`) and JUnit 5's console launcher, with no Maven repository",
                      ("java",), _C_LIKE,
                      r"\b(?:class|interface|enum|record)\s+([A-Za-z_]\w*)|"
                      r"\b(?:public|private|protected|static)\s+[\w<>\[\], ?]+\s+([A-Za-z_]\w*)\s*\("),
    "rust": Toolchain("Rust", "rustc and cargo, offline (no crate can be fetched)", ("rs",), _C_LIKE,
                      r"\b(?:fn|struct|enum|trait|impl|mod)\s+([A-Za-z_]\w*)"),
}


def toolchain(language: str) -> Toolchain:
    """The language's toolchain; a generic one (its name, the image's tools) when it has no entry."""
    known = TOOLCHAINS.get(language.lower())
    if known is not None:
        return known
    name = language or "unknown"
    return Toolchain(name, f"the {name} toolchain of the repository's image", (), "#",
                     r"\b(?:def|func|fn|function|class|struct)\s+([A-Za-z_]\w*)")


def agent_test_command(task: Task) -> str:
    """The command that runs the task's tests, as the agent can run it in its sandbox: the task
    set's own for a `command` task, pytest for a pytest task (in the task's shell environment)."""
    if task.tests.framework == "pytest":
        return "python -m pytest"
    return task.tests.command


def shell_setup(task: Task) -> str | None:
    """What runs before each of the agent's shell commands: the task's environment (`test_cmd`,
    e.g. conda's testbed), and `$REPORT_DIR` for a test command that writes its report there."""
    lines = [task.test_cmd] if task.test_cmd else []
    if task.tests.framework != "pytest" and "REPORT_DIR" in task.tests.command:
        lines.append(f'export REPORT_DIR={REPORT_DIR} && mkdir -p "$REPORT_DIR"')
    return "\n".join(lines) or None
