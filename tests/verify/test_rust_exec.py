"""Which Rust commands root compiles (`frameworks/rust_exec.py`): only a plain `cargo test ...` whose
options are known, for tasks graded by no doc-test, and a patch that changes no package with build
code; anything else runs as the tests' user, and the verdict says their source was readable."""

from __future__ import annotations

import base64
import subprocess

import pytest

from factory.records import FlagKind, Task, TestSpec, TestStatus
from factory.sandbox.printed import HEADER
from factory.verify.frameworks import rust_exec
from factory.verify.frameworks.base import PRIVATE, RootBuild
from factory.verify.frameworks.command import REPORT_DIR, SCRATCH, TESTS_ENVIRONMENT
from factory.verify.frameworks.copies.base import COPY_WRITERS
from factory.verify.results import read, status_of
from tests.verify.copies.realrun import check, demo_tasks, gold_repo, plant


def task(command: str, language: str = "rust", as_root: bool = False, p2p: tuple[str, ...] = ()) -> Task:
    return Task(instance_id="t", repo="r", problem_statement="", image="i", language=language,
                FAIL_TO_PASS=["record_lines"], PASS_TO_PASS=list(p2p),
                tests=TestSpec(framework="command", command=command, results="cargo", as_root=as_root))


@pytest.mark.parametrize(("command", "build", "args"), [
    ("cargo test --offline --no-fail-fast", ("--offline", "--no-fail-fast"), ()),
    ("cargo test --test io_read_buf -- --nocapture", ("--test", "io_read_buf"), ("--nocapture",)),
    ("cargo test -p core --features=serde parse -- --exact", ("-p", "core", "--features=serde"), ("parse", "--exact")),
    ("cargo test --workspace --all-features --release", ("--workspace", "--all-features", "--release"), ()),
])
def test_a_plain_cargo_test_is_compiled_by_root(command, build, args):
    cargo = rust_exec.read_command(task(command))
    assert cargo is not None and (cargo.build, cargo.args) == (build, args)
    assert cargo.fail_fast is ("--no-fail-fast" not in command)


@pytest.mark.parametrize("command", [
    "make test", "sh run-tests.sh", "cargo test | tee out", "cd x && cargo test", "cargo test --doc",
    "cargo test --target x86_64-unknown-linux-musl", "cargo test --config target.x.runner='sh'", "cargo test -q",
    "cargo test --target-dir /tmp/t", "cargo test --no-run", "RUSTFLAGS=-x cargo test", "cargo test a b",
    "cargo test -Zunstable-options", "cargo nextest run", "cargo test -p",
])
def test_anything_else_runs_as_the_tests_user(command):
    assert rust_exec.read_command(task(command)) is None
    verdict = rust_exec.root_build(task(command), "", {}, [], "timeout 60", "HOME=/x")
    assert verdict.kind is FlagKind.weak_controls and "not one plain `cargo test`" in verdict.detail


def test_doc_tests_are_never_built_by_root():
    # rustdoc builds and runs a doc-test itself: run as root, it would run the patch's code
    graded = task("cargo test --offline", p2p=("src/lib.rs - Reader::new (line 12)",))
    assert not rust_exec.applies(graded) and rust_exec.readback(graded) == ":"
    assert "doc-tests are graded" in rust_exec.root_build(graded, "", {}, [], "timeout 60", "").detail


def test_other_languages_and_root_tasks_are_left_alone():
    assert rust_exec.root_build(task("cargo test", language="go"), "", {}, [], "timeout 60", "") is None
    assert rust_exec.root_build(task("cargo test", as_root=True), "", {}, [], "timeout 60", "") is None


def printed(scripts: str = "", manifests: str = "", reaching: str = "") -> str:
    """What `readback` prints: folders with a build.rs, manifests that may declare build code, and
    of those the ones that may name other code of the repo."""
    files = [scripts, manifests, reaching]
    return "".join(f"{HEADER} rust-build-code {i} 1\n{base64.b64encode(text.encode()).decode()}\n" for i, text in enumerate(files))


def build(listed: str, touched: list[str], restore: dict[str, bytes | None] | None = None):
    return rust_exec.root_build(task("cargo test --offline"), listed, restore or {}, touched, "timeout 60", "HOME=/t")


def test_a_patch_into_a_package_with_build_code_is_built_by_the_tests_user():
    # compiling a package with a build script or a proc macro runs its code: never the patch's as root
    listed = printed("gen\n", "macros/Cargo.toml\nvendor/serde_derive/Cargo.toml\n")
    assert isinstance(build(listed, ["src/lib.rs", "macros.rs", "general/x.rs"]), RootBuild)
    for path in ("macros/src/lib.rs", "gen/src/x.rs", "vendor/serde_derive/src/lib.rs"):
        flag = build(listed, ["src/lib.rs", path])
        assert flag.kind is FlagKind.weak_controls and path in flag.detail
    assert not isinstance(build(printed("", "Cargo.toml\n"), ["src/lib.rs"]), RootBuild)  # the root package's


def test_build_code_that_may_use_another_package_of_the_repo_makes_every_patch_built_by_the_tests_user():
    # a proc macro's path dependency, a build script's path build-dependency: their code runs at
    # build time too, and which folder they are would take cargo's reading
    assert not isinstance(build(printed("gen\n", "", "gen/Cargo.toml\n"), ["shared/src/lib.rs"]), RootBuild)
    assert not isinstance(build(printed("", "macros/Cargo.toml\n", "macros/Cargo.toml\n"), ["src/lib.rs"]), RootBuild)
    # the agent's own path dependency of a proc macro is put back: no downgrade
    put_back = {"macros/Cargo.toml": b'[package]\nname = "m"\n\n[lib]\nproc-macro = true\n'}
    assert isinstance(build(printed("", "macros/Cargo.toml\n", "macros/Cargo.toml\n"), ["src/lib.rs"], put_back), RootBuild)


def test_build_code_is_judged_as_the_policy_put_it_back():
    # a new member's `proc-macro = true` is put back (gone): no downgrade to the readable path by adding one;
    # a start-state proc macro whose manifest the patch emptied is put back (there) and counts
    listed = printed("", "forge/Cargo.toml\n")
    assert isinstance(build(listed, ["forge/src/lib.rs"], {"forge/Cargo.toml": b'[package]\nname = "forge"\n'}), RootBuild)
    assert isinstance(build(listed, ["forge/src/lib.rs"], {"forge/Cargo.toml": None}), RootBuild)
    put_back = {"macros/Cargo.toml": b'[package]\nname = "m"\n\n[lib]\nproc-macro = true\n'}
    assert not isinstance(build(printed(), ["macros/src/lib.rs"], put_back), RootBuild)


def test_root_builds_with_the_commands_options_and_runs_binaries_as_the_tests_user():
    built = build(printed(), ["src/lib.rs"])
    assert built.runner == f"timeout 60 sh {rust_exec.EXEC} < /dev/null"
    program = built.files[rust_exec.EXEC]
    assert "cargo test --no-run --message-format=json-render-diagnostics --offline" in program
    assert "setpriv --reuid=1000" in program and "HOME=/t" in program


PROBE = """#[test]
fn sources_are_unreadable() {
    for path in ["tests/reader.rs", "src/lib.rs", "/proc/self/exe"] {
        assert!(std::fs::File::open(path).is_err(), "{} is readable", path);
    }
}
"""


@pytest.mark.docker
@pytest.mark.parametrize("demo", demo_tasks("demo-rust"), ids=lambda t: t.instance_id.rsplit(".", 1)[-1])
def test_every_demo_gold_fix_passes_built_by_root_and_its_copies_fail(tmp_path, demo):
    # root's program on the gold fix with the copies planted and a test of the tests' reach: the
    # output reads as cargo test's, every original passes, every copy fails, and no source is readable
    work = gold_repo(tmp_path, "demo-rust", demo)
    copies = plant(work, COPY_WRITERS.get("rust"), demo, seed=7)
    (work / "tests/zz_probe.rs").write_text(PROBE)
    program = rust_exec.program(rust_exec.read_command(demo), TESTS_ENVIRONMENT)
    (work / "cargo-exec").write_text(program)
    script = "\n".join([
        "cp -r /w /testbed && cd /testbed && chown -R root:root . && chmod -R go-w .", *rust_exec.setup("/testbed"),
        f"mkdir -p {PRIVATE} {SCRATCH}/home {SCRATCH}/tmp {REPORT_DIR} && chown -R 1000:1000 {SCRATCH}",
        f"mv cargo-exec {rust_exec.EXEC} && sh {rust_exec.EXEC} 2>&1"])
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", "--label", "factory.test=rust-exec",
                           "-v", f"{work}:/w:ro", "factory/rust:1", "sh", "-c", script],
                          capture_output=True, text=True, timeout=900)
    results = read("cargo", done.stdout, exit_code=done.returncode)
    check(results, demo, copies)
    assert status_of(results, "sources_are_unreadable")[0] is TestStatus.passed, done.stdout[-3000:]
    assert "Running unittests src/lib.rs (" in done.stdout and "Running tests/reader.rs (" in done.stdout
