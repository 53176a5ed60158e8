"""Go's tests compiled by root and run by the tests' user, who cannot read a test's source.

`go test` compiles each package's tests into a binary and runs it. Compiling Go runs none of the
code it compiles (no build scripts, no macros; cgo is off), so root may do it; `go test -exec`
(set through GOFLAGS, the task's command unchanged) hands each binary to a wrapper that copies it
where the tests' user may execute it but not read it, and runs it as that user. Every
`_test.go` file is root's and unreadable to that user: the code under test cannot read a
FAIL_TO_PASS test, its copies or the canary at run time (the second red team's forgers read the
test files to tell copies from originals, or to answer with a test's expected values), nor its
own binary (`/proc/self/exe`: execute-only). Go still reports what the binary printed, as the
`go` process (root's) turns it into `-json` events.

What is left: the code can read its own memory (the compiled tests' constants are in it, without
their names beside them), and `//go:embed` could carry a test file into the binary at compile
time, which the Go diff policy refuses (`languages/go.py`). Only a plain `go test ...` command is
run this way; any other command (a script, a pipe, `make`) could run the patch's code as root.
"""

from __future__ import annotations

import shlex

from factory.records import Task
from factory.verify.frameworks.base import PRIVATE, SHELL_SYNTAX, TEST_UID, RootBuild

EXEC = f"{PRIVATE}/go-exec"
BINARIES = "/tmp/factory-go-bin"
"""Root's, mode 711: the tests' user may run a binary in it by its name, and list nothing."""


def root_builds(task: Task) -> bool:
    """Whether the task's command is one plain `go test ...` that root may run (it executes only
    the Go toolchain of the image)."""
    command = task.tests.command or ""
    if task.language != "go" or task.tests.as_root or any(c in SHELL_SYNTAX for c in command):
        return False
    words = shlex.split(command)
    return words[:2] == ["go", "test"] and not any(w.startswith(("-exec", "-toolexec", "-overlay")) for w in words)


def root_build(task: Task, run: str, tests_environment: str) -> RootBuild | None:
    """Root runs the task's command (`run`, timed) with `go test -exec` set to the wrapper; None
    when the command is not one plain `go test`."""
    if not root_builds(task):
        return None
    return RootBuild(files={EXEC: wrapper(tests_environment)}, setup=setup(task.workdir),
                     runner=f"env -i PATH=\"$PATH\" {environment()} {run}")


def setup(workdir: str) -> list[str]:
    """Root's lines before the run: the tests unreadable, the binaries' folder, the wrapper."""
    return [f"find {shlex.quote(workdir)} -name '*_test.go' -type f -exec chmod 600 {{}} +",
            f"rm -rf {BINARIES} && mkdir -m 711 {BINARIES}", f"chmod 755 {EXEC}",
            f"mkdir -p {PRIVATE}/home {PRIVATE}/go-tmp"]


def environment() -> str:
    """The `go` command's own environment (root's caches, no toolchain or module downloads)."""
    return " ".join([f"HOME={PRIVATE}/home", f"GOCACHE={PRIVATE}/go-build", f"GOPATH={PRIVATE}/go", "GOENV=off",
                     "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-exec=" + EXEC, "CGO_ENABLED=0",
                     f"GOTMPDIR={PRIVATE}/go-tmp"])


def wrapper(tests_environment: str) -> str:
    """`go test -exec`'s program: argv[1] is the binary, the rest its flags; its working folder
    is the package's, as go set it."""
    as_tests = f"setpriv --reuid={TEST_UID} --regid={TEST_UID} --clear-groups"
    return "\n".join([
        "#!/bin/sh",
        f'd=$(mktemp -d {BINARIES}/XXXXXXXX) && chmod 711 "$d" && cp "$1" "$d/test" && chmod 711 "$d/test" || exit 1',
        "shift",
        f'exec {as_tests} env -i PATH="$PATH" {tests_environment} "$d/test" "$@"',
    ]) + "\n"
