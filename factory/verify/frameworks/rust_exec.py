"""Rust's tests compiled by root and run by the tests' user, who cannot read a test's source.

For a plain `cargo test ...` command, root runs `cargo test --no-run` with the command's own
selection and features (offline, in a build folder of its own, `--message-format=json` to learn
the test executables), then runs each test binary as the tests' user, in its package's folder,
with the name filter and the words after `--` the command gave, and prints cargo's `Running`
line before each: the output reads as the command's would. `--no-run` runs no test and builds
no doc-test, so root executes only what compiling runs: the build scripts and proc macros of the
start state (a patch that changes a package holding either is compiled as today, below). Every
`.rs` file of the repo (the tests, their copies, the canary, modules with `#[cfg(test)]`) is
root's with mode 600, the build folder's folders 711 and its executables execute-only: the code
under test cannot read a FAIL_TO_PASS test, a copy or its own binary while it runs.

Root must not run the patch's code, so the tests run as today (the tests' user builds and runs
them, and can read their source; the verdict says so) when: the command is not one plain
`cargo test` this module can read; a FAIL_TO_PASS or PASS_TO_PASS test is a doc-test (rustdoc
builds and runs those itself); or the patch changes a file of a package that has a build script
or is a proc macro, or such a package may use another package of the repo (`readback` lists
them; `built_by` judges them as the policy left them). The
diff policy keeps the patch from adding either, and refuses an `include_str!`/`include_bytes!` that may carry a test
file into the binary (`languages/rust.py`).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from factory.records import FlagKind, Task, VerdictFlag
from factory.sandbox.printed import print_files, printed_files
from factory.verify.facts import name_of
from factory.verify.frameworks.base import PRIVATE, SHELL_SYNTAX, TEST_UID, RootBuild

EXEC = f"{PRIVATE}/cargo-exec"
TARGET = "/tmp/factory-cargo"
"""Root's build folder. After the build its folders are 711 and its executables execute-only: the
tests' user runs a test binary, or a binary of the crate a test names (`CARGO_BIN_EXE_*`), by
its path, and reads nothing."""
BUILT, LISTED = f"{PRIVATE}/cargo-built.json", f"{PRIVATE}/cargo-tests"
SCRIPTS, MANIFESTS, REACHING = f"{PRIVATE}/build-scripts", f"{PRIVATE}/build-code-manifests", f"{PRIVATE}/build-code-reach"
BUILD_CODE = re.compile(r"(^|[^A-Za-z0-9_-])build[^A-Za-z0-9_-]*=|proc[-_]macro", re.M)
"""What a Cargo.toml that may declare build code holds: a `build` key, a proc macro (in comments
too: a package taken for one by mistake is built as before, never the other way round); one
pattern for grep -E and Python."""
REACHES = re.compile(r"(^|[^A-Za-z0-9_-])(path|workspace)[^A-Za-z0-9_-]*=", re.M)
"""What a manifest that names other code of the repo holds: a `path` dependency, or one it takes
from the workspace (which may be a path)."""
_VALUED = frozenset({"-p", "--package", "--exclude", "-F", "--features", "--test", "--bin", "--example", "--bench",
                     "-j", "--jobs", "--profile", "--manifest-path", "--color"})
_FLAGS = frozenset({"--workspace", "--all", "--lib", "--bins", "--tests", "--examples", "--benches", "--all-targets",
                    "--all-features", "--no-default-features", "--release", "-r", "--offline", "--frozen", "--locked",
                    "--no-fail-fast", "-v", "--verbose", "-vv"})
"""cargo test's options that choose what is built, and how loudly: handed to `cargo test --no-run`.
Any other (`--doc`, `--target`, `--config`, `-q`, `-Z`, `--target-dir`, `--no-run`) keeps today's path."""
_DOC_TEST = re.compile(r" - .*\(line \d+\)$")
"""A doc-test's id as libtest reports it: `src/lib.rs - Reader::new (line 12)`."""


@dataclass(frozen=True)
class CargoTest:
    """A `cargo test` command as cargo reads it."""

    build: tuple[str, ...]
    """Its options, for `cargo test --no-run`."""
    args: tuple[str, ...]
    """What cargo hands every test binary: the name filter, then the words after `--`."""

    @property
    def fail_fast(self) -> bool:
        return "--no-fail-fast" not in self.build


def read_command(task: Task) -> CargoTest | None:
    """The task's command if it is one plain `cargo test ...` whose every option this module knows."""
    command = task.tests.command or ""
    if task.language != "rust" or task.tests.as_root or any(c in SHELL_SYNTAX for c in command):
        return None
    words = shlex.split(command)
    if words[:2] != ["cargo", "test"]:
        return None
    own, passed = (words[2:words.index("--")], words[words.index("--") + 1:]) if "--" in words else (words[2:], [])
    build: list[str] = []
    names: list[str] = []
    rest = iter(own)
    for word in rest:
        if word in _FLAGS or word.startswith("--") and "=" in word and word.split("=", 1)[0] in _VALUED:
            build.append(word)
        elif word in _VALUED:
            build += [word, next(rest, "")]
        elif not word.startswith("-"):
            names.append(word)
        else:
            return None
    if len(names) > 1 or "" in build:
        return None
    return CargoTest(tuple(build), tuple([*names, *passed]))


def applies(task: Task) -> bool:
    """Whether a Rust task's tests may be compiled by root, as far as the task alone says."""
    return read_command(task) is not None and not _doc_tests(task)


def readback(task: Task) -> str:
    """Root's shell, in the repo with the patch applied: the folders with a `build.rs`, the
    manifests that may declare build code (`BUILD_CODE`), and of those and the build scripts'
    the ones that may name other code of the repo (`REACHES`), vendored crates' too."""
    if not applies(task):
        return ":"
    return "\n".join([
        f"find . -name .git -prune -o -name target -prune -o -name Cargo.toml -type f -print | while IFS= read -r m; do "
        'd=${m%/Cargo.toml}; b=""; if [ -e "$d/build.rs" ]; then printf "%s\\n" "${d#./}" >&3; b=1; fi; '
        f'if grep -Eqs {shlex.quote(BUILD_CODE.pattern)} "$m"; then printf "%s\\n" "${{m#./}}"; b=1; fi; '
        f'if [ -n "$b" ] && grep -Eqs {shlex.quote(REACHES.pattern)} "$m"; then printf "%s\\n" "${{m#./}}" >&4; fi; '
        f"done > {MANIFESTS} 3> {SCRIPTS} 4> {REACHING}",
        print_files([SCRIPTS, MANIFESTS, REACHING], "rust-build-code"),
    ])


def built_by(printed: str, restore: dict[str, bytes | None]) -> list[str]:
    """The package folders whose code compiling runs, as the tests will see the repo (a manifest
    the policy put back is judged as put back: a new member's `proc-macro` is gone). Where build
    code may use another package of the repo (a path or workspace dependency of a proc macro or a
    build script), that is the whole repo ("."): which package it is would take cargo's reading."""
    listed = printed_files(printed, "rust-build-code", [SCRIPTS, MANIFESTS, REACHING])
    scripts, manifests, reaching = ({line for line in (listed[f] or b"").decode(errors="replace").split("\n") if line}
                                    for f in (SCRIPTS, MANIFESTS, REACHING))
    restored = {m: (text or b"").decode(errors="replace") for m, text in restore.items() if name_of(m) == "Cargo.toml"}
    builds = {m for m in manifests if m not in restored} | {m for m, text in restored.items() if BUILD_CODE.search(text)}
    builds |= {"Cargo.toml" if f == "." else f"{f}/Cargo.toml" for f in scripts}
    reach = {m for m in reaching if m not in restored} | {m for m, text in restored.items() if REACHES.search(text)}
    if builds & reach:
        return ["."]
    return sorted(m.removesuffix("Cargo.toml").rstrip("/") or "." for m in builds)


def root_build(task: Task, printed: str, restore: dict[str, bytes | None], touched: list[str], timed: str,
               tests_environment: str) -> RootBuild | VerdictFlag | None:
    """How root builds and runs a Rust task's tests; a flag that says why the tests' user builds and
    runs them as before (their source readable to the code under test); None for no Rust task.
    `printed` is what `readback` printed, `restore` the files the policy put back."""
    if task.language != "rust" or task.tests.as_root:
        return None
    cargo = read_command(task)
    if cargo is None:
        return _readable("the test command is not one plain `cargo test` whose options factory reads")
    if doc := _doc_tests(task):
        return _readable(f"doc-tests are graded ({doc[0]}): rustdoc builds and runs them itself")
    folders = built_by(printed, restore)
    changed = sorted({p for p in touched for f in folders if f == "." or p.startswith(f"{f}/")})
    if changed:
        return _readable(f"the patch changes a package with build code (a build script or a proc macro): {', '.join(changed[:3])}")
    return RootBuild(files={EXEC: program(cargo, tests_environment)}, setup=setup(task.workdir),
                     runner=f"{timed} sh {EXEC} < /dev/null")


def setup(workdir: str) -> list[str]:
    """Root's lines before the run: every Rust source unreadable to the tests' user."""
    return [f"find {shlex.quote(workdir)} -name .git -prune -o -name '*.rs' -type f -exec chmod 600 {{}} +"]


def environment() -> str:
    """Root's cargo's own environment: its own home and build folder, nothing of the image's."""
    return " ".join([f"HOME={PRIVATE}/home", f"CARGO_HOME={PRIVATE}/cargo", f"CARGO_TARGET_DIR={TARGET}",
                     "CARGO_NET_OFFLINE=true", "CARGO_TERM_COLOR=never"])


# cargo's JSON messages (one a line, keys in a fixed order) -> a tab-separated line per test
# binary: package folder, kind's rank, cargo's label for it, the executable. A test build's
# profile ends `"test":true}` before `"features"`; a value holding a quote is cut short (and its
# binary then does not run: such a path is no correct fix's).
_LIST = r"""
function value(key) {
  if (!match($0, "\"" key "\":\"[^\"]*\"")) return ""
  return substr($0, RSTART + length(key) + 4, RLENGTH - length(key) - 5)
}
/"reason":"compiler-artifact"/ && /"test":true},"features"/ && /"executable":"/ {
  dir = value("manifest_path"); sub(/\/Cargo\.toml$/, "", dir); src = value("src_path")
  match($0, /"kind":\["[^"]*"/); kind = substr($0, RSTART + 9, RLENGTH - 10)
  if (index(src, dir "/") == 1) src = substr(src, length(dir) + 2)
  whole = (kind == "test" || kind == "bench" || kind == "example")
  print dir "\t" (kind == "lib" ? 0 : kind == "bin" ? 1 : kind == "test" ? 2 : 3) "\t" (whole ? "" : "unittests ") src "\t" value("executable")
}
"""


def program(cargo: CargoTest, tests_environment: str) -> str:
    """Root's program: build the tests, open the build folder to execution only, run each test
    binary as the tests' user as cargo would (cargo exits 101 when a test or the build failed)."""
    as_tests = f"setpriv --reuid={TEST_UID} --regid={TEST_UID} --clear-groups"
    stop = 'echo "error: test failed" >&2; exit 101' if cargo.fail_fast else "status=101"
    return "\n".join([
        "#!/bin/sh",
        f"rm -rf {TARGET} && mkdir -m 700 {TARGET} && mkdir -p {PRIVATE}/home {PRIVATE}/cargo || exit 1",
        f'env -i PATH="$PATH" {environment()} cargo test --no-run --message-format=json-render-diagnostics '
        f"{shlex.join(cargo.build)} > {BUILT}",
        "status=$?",  # a build that failed runs no test, as under cargo test (with --no-fail-fast too)
        '[ "$status" -eq 0 ] || exit "$status"',
        # integration tests may write to CARGO_TARGET_TMPDIR (compiled in as $TARGET/tmp)
        f"chmod -R go= {TARGET} && find {TARGET} -type d -exec chmod 711 {{}} + && "
        f"find {TARGET} -type f -perm -u+x -exec chmod 711 {{}} + && mkdir -p {TARGET}/tmp && "
        f"chown {TEST_UID}:{TEST_UID} {TARGET}/tmp && chmod 700 {TARGET}/tmp",
        f"awk {shlex.quote(_LIST)} {BUILT} | sort -t '\t' -k1,1 -k2,2n -k3,3 > {LISTED}",
        "tab=$(printf '\\t')",
        'while IFS="$tab" read -r dir rank label exe <&3; do',
        '  printf "     Running %s (%s)\\n" "$label" "$exe" >&2',
        f'  (cd "$dir" && exec {as_tests} env -i PATH="$PATH" {tests_environment} CARGO_MANIFEST_DIR="$dir" '
        f'"$exe" {shlex.join(cargo.args)} < /dev/null 3<&-) || {{ {stop}; }}',
        f"done 3< {LISTED}",
        '[ "$status" -eq 0 ] || exit 101',
    ]) + "\n"


def _doc_tests(task: Task) -> list[str]:
    return [t for t in (*task.FAIL_TO_PASS, *task.PASS_TO_PASS) if _DOC_TEST.search(t)]


def _readable(why: str) -> VerdictFlag:
    return VerdictFlag(kind=FlagKind.weak_controls, detail=f"the tests' user built and ran the tests and could read "
                                                           f"their source: {why}")
