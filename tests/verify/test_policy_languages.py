"""The diff policy in Go, JavaScript/TypeScript, Java and Rust: attack paths refused or left out,
manifests put back where they say how the tests run, and a correct fix's side effects kept."""

from __future__ import annotations

import json
import tomllib

import pytest

from factory.records import FlagKind
from factory.verify.languages import LANGUAGES, PutBack, Refusal, rules_for
from factory.verify.languages.python import PythonRules
from factory.verify.policy import Change, RepoFacts, apply_policy, command_files
from tests.verify.conftest import texts


def judge(language: str, *paths: str, files: frozenset[str] = frozenset(), **facts):
    return apply_policy([Change(p) for p in paths], RepoFacts(language=language, files=files, **facts))


def after(language: str, path: str, before: str | None, agent: str | None, command: str = ""):
    """`Rules.judge` of a kept manifest: the start state's text and the agent's."""
    facts = RepoFacts(language=language, command=command)
    return rules_for(language).judge(path, None if before is None else before.encode(),
                                     None if agent is None else agent.encode(), facts)


def test_every_language_of_the_task_sets_has_rules_and_python_keeps_its_own():
    assert set(LANGUAGES) >= {"python", "go", "javascript", "typescript", "java", "rust"}
    assert isinstance(rules_for("python"), PythonRules)
    decision = judge("cobol", "tests/check.cbl", "src/main.cbl")  # no rules of its own: its test folders
    assert texts(decision.flags) == ["dropped test change: tests/check.cbl"]


# ---------------------------------------------------------------------- paths, per language

REFUSED = [
    ("javascript", "node_modules/chai/index.js", "shadow"), ("typescript", "packages/a/node_modules/x/i.js", "shadow"),
    ("javascript", ".pnp.cjs", "shadow"),
    ("java", "src/main/resources/META-INF/services/org.junit.jupiter.api.extension.Extension", "service"),
    ("java", "lib/META-INF/services/org.junit.platform.launcher.TestExecutionListener", "service"),
    ("java", "src/main/java/org/junit/jupiter/api/Assertions.java", "shadows"),
    ("java", "src/main/java/org/opentest4j/AssertionFailedError.java", "shadows"),
    ("go", "x.pth", "start-up hook"), ("rust", ".git/hooks/pre-commit", "inside .git"),
]


@pytest.mark.parametrize(("language", "path", "why"), REFUSED)
def test_refused_paths(language, path, why):
    decision = judge(language, path, "src/fix.txt")
    assert decision.rejected and why in decision.rejected
    assert [f.kind for f in decision.flags] == [FlagKind.refused]


DROPPED = [
    ("go", "semver_test.go", FlagKind.dropped_test_change), ("go", "internal/x/testdata/case.json", FlagKind.dropped_test_change),
    ("go", "go.work", FlagKind.dropped_test_configuration), ("go", "vendor/github.com/stretchr/testify/assert/assertions.go",
                                                               FlagKind.dropped_test_configuration),
    ("javascript", "__tests__/parse.js", FlagKind.dropped_test_change), ("javascript", "lib/parse.test.js", FlagKind.dropped_test_change),
    ("typescript", "src/parse.spec.ts", FlagKind.dropped_test_change), ("javascript", "test/helpers.js", FlagKind.dropped_test_change),
    ("javascript", "src/__snapshots__/a.test.js.snap", FlagKind.dropped_test_change),
    ("javascript", "jest.config.js", FlagKind.dropped_test_configuration), ("typescript", "vitest.config.mts", FlagKind.dropped_test_configuration),
    ("javascript", ".mocharc.yml", FlagKind.dropped_test_configuration), ("javascript", "src/setupTests.ts", FlagKind.dropped_test_configuration),
    ("javascript", "__mocks__/fs.js", FlagKind.dropped_test_configuration), ("javascript", ".npmrc", FlagKind.dropped_test_configuration),
    ("javascript", "karma.conf.js", FlagKind.dropped_test_configuration), ("javascript", ".nycrc.json", FlagKind.dropped_test_configuration),
    ("java", "src/test/java/calc/MineTest.java", FlagKind.dropped_test_change),
    ("java", "core/src/integrationTest/java/A.java", FlagKind.dropped_test_change),
    ("java", "src/test/resources/junit-platform.properties", FlagKind.dropped_test_configuration),
    ("java", "src/main/resources/junit-platform.properties", FlagKind.dropped_test_configuration),
    ("java", "build.gradle.kts", FlagKind.dropped_test_configuration), ("java", "app/build.gradle", FlagKind.dropped_test_configuration),
    ("java", ".mvn/jvm.config", FlagKind.dropped_test_configuration), ("java", "gradle/wrapper/gradle-wrapper.properties",
                                                                          FlagKind.dropped_test_configuration),
    ("rust", "tests/reader.rs", FlagKind.dropped_test_change), ("rust", "crates/core/tests/it.rs", FlagKind.dropped_test_change),
    ("rust", ".cargo/config.toml", FlagKind.dropped_test_configuration), ("rust", "rust-toolchain.toml", FlagKind.dropped_test_configuration),
]


@pytest.mark.parametrize(("language", "path", "kind"), DROPPED)
def test_dropped_paths_leave_the_fix_graded(language, path, kind):
    decision = judge(language, path, "src/fix.x")
    assert not decision.rejected
    assert [str(f) for f in decision.flags] == [f"{kind.value}: {path}"]
    assert [c.path for c in decision.kept] == ["src/fix.x"]


def test_a_build_script_is_test_configuration_next_to_a_manifest_only():
    assert texts(judge("rust", "build.rs", files=frozenset({"Cargo.toml"})).flags) == ["dropped test configuration: build.rs"]
    assert texts(judge("rust", "gen/build.rs", "gen/Cargo.toml").flags) == ["dropped test configuration: gen/build.rs"]
    assert judge("rust", "src/build.rs", files=frozenset({"Cargo.toml"})).flags == []  # a module named build


KEPT = [
    ("go", ["constraint.go", "internal/bump/bump.go", "README.md", "docs/ünïcode.md", "go.sum"]),
    ("javascript", ["lib/parse.js", "lib/ñame.js", "README.md", "CHANGELOG.md", "package.json", "package-lock.json"]),
    ("typescript", ["src/index.ts", "tsconfig.json", "src/contest.ts", "src/latest.ts"]),
    ("java", ["src/main/java/calc/Calculator.java", "src/main/java/calc/Ärger.java", "pom.xml", "docs/calc.md",
              "src/main/java/org/example/test/Util.java"]),
    ("rust", ["src/reader.rs", "src/build.rs", "Cargo.toml", "Cargo.lock", "README.md", "src/ünï.rs"]),
]


@pytest.mark.parametrize(("language", "paths"), KEPT)
def test_a_fixs_own_files_are_kept(language, paths):
    decision = judge(language, *paths, files=frozenset({"Cargo.toml"}))
    assert decision.rejected is None and not decision.dropped
    assert [c.path for c in decision.kept] == paths


def test_a_fix_with_its_own_new_test_and_a_renamed_module():
    decision = apply_policy([Change("constraint.go"), Change("constraint_mine_test.go"), Change("caret.go", source="range.go")],
                            RepoFacts(language="go", files=frozenset({"range.go", "constraint.go"})))
    assert not decision.rejected
    assert texts(decision.flags) == ["dropped test change: constraint_mine_test.go"]
    assert [c.path for c in decision.kept] == ["constraint.go", "caret.go"]
    renamed_test = apply_policy([Change("src/parse.js", source="test/parse.test.js")], RepoFacts(language="javascript"))
    assert texts(renamed_test.flags) == ["dropped test change: src/parse.js"]  # out of the tests, or into them


def test_the_script_the_task_command_names_is_the_runners():
    files = frozenset({"run-tests.sh", "src/main/java/calc/Calculator.java"})
    assert command_files("sh run-tests.sh", files) == {"run-tests.sh"}
    assert command_files("./gradlew test --offline", files | {"gradlew"}) == {"gradlew"}
    decision = judge("java", "run-tests.sh", "src/main/java/calc/Calculator.java", files=files,
                     command_files=command_files("sh run-tests.sh", files))
    assert texts(decision.flags) == ["dropped test configuration: run-tests.sh"]


def test_the_manifests_are_read_after_the_apply():
    decision = judge("rust", "Cargo.toml", "Cargo.lock", "src/lib.rs")
    assert decision.judged_after == ["Cargo.lock", "Cargo.toml", "src/lib.rs"]
    assert judge("go", "go.mod", "a.go", "README.md").judged_after == ["a.go", "go.mod"]
    assert judge("javascript", "package.json", "yarn.lock", "lib/a.js").judged_after == ["package.json", "yarn.lock"]
    assert judge("java", "pom.xml", "src/main/java/A.java").judged_after == ["pom.xml"]
    assert judge("python", "pyproject.toml", "toy/core.py").judged_after == ["pyproject.toml"]


# ---------------------------------------------------------------------- Go: go.mod, linknames

GO_MOD = "module example.com/semver\n\ngo 1.19\n\nrequire (\n\tgithub.com/a/b v1.2.0\n)\n\nreplace github.com/x/y => github.com/x/y v1.0.0\n"


def test_a_replace_directive_is_put_back_and_a_require_bump_kept():
    agent = GO_MOD.replace("v1.2.0", "v1.3.0") + "replace (\n\tgithub.com/a/b => ./fakeb // the tests' assert\n)\n"
    judged = after("go", "go.mod", GO_MOD, agent)
    assert isinstance(judged, PutBack) and "replace put back, the rest kept" in judged.why
    text = judged.content.decode()
    assert "github.com/a/b v1.3.0" in text and "./fakeb" not in text
    assert "replace github.com/x/y => github.com/x/y v1.0.0" in text


def test_a_toolchain_line_is_put_back_and_a_plain_bump_is_harmless():
    judged = after("go", "go.mod", GO_MOD, GO_MOD.replace("go 1.19\n", "go 1.19\ntoolchain go1.99\n"))
    assert isinstance(judged, PutBack) and "toolchain" not in judged.content.decode()
    assert after("go", "go.mod", GO_MOD, GO_MOD.replace("v1.2.0", "v1.2.1")) is None
    assert after("go", "go.mod", GO_MOD, GO_MOD + "// a comment that names replace\n") is None


def test_a_linkname_into_the_test_runner_is_refused():
    body = 'package semver\n\nimport _ "unsafe"\n\n//go:linkname {local} {target}\nfunc {local}()\n'
    for target in ("testing.tRunner", "runtime.exit", "internal/testlog.PanicOnExit0"):
        judged = after("go", "hook.go", None, body.format(local="hook", target=target))
        assert isinstance(judged, Refusal) and target in judged.why
    assert after("go", "hook.go", None, body.format(local="now", target="time.now")) is None
    start = body.format(local="hook", target="runtime.exit")
    assert after("go", "hook.go", start, start + "\n// more\n") is None  # there before the patch: not the agent's


def test_code_under_test_that_names_the_tests_data_is_refused():
    reads = 'package report\n\nimport "os"\n\nfunc golden() []byte {\n\tb, _ := os.ReadFile(PATH)\n\treturn b\n}\n'
    for path in ('"testdata/summary.golden"', 'filepath.Join("testdata", "a.golden")', '`../report/testdata/x`'):
        judged = after("go", "report/golden.go", None, reads.replace("PATH", path))
        assert isinstance(judged, Refusal) and "testdata" in judged.why, path
    embeds = 'package report\n\nimport _ "embed"\n\n//go:embed testdata/summary.golden\nvar golden string\n'
    assert isinstance(after("go", "report/golden.go", None, embeds), Refusal)
    # what is not the code under test naming it: a comment, another word, a generator, a test helper
    assert after("go", "report/golden.go", None, reads.replace("PATH", '"mytestdata.txt"') + "// see testdata/\n") is None
    generator = "//go:build ignore\n\n" + reads.replace("PATH", '"testdata/summary.golden"')
    assert after("go", "report/gen.go", None, generator) is None
    assert after("go", "internal/testutil/golden.go", None, reads.replace("PATH", '"testdata/x"')) is None
    start = reads.replace("PATH", '"testdata/x"')
    assert after("go", "report/golden.go", start, start + "\n// more\n") is None  # there before the patch


# ---------------------------------------------------------------------- JS: package.json, lockfiles

PACKAGE = {"name": "qstring", "version": "1.0.0", "scripts": {"test": "mocha test/", "lint": "eslint ."}, "license": "MIT"}


def package(**changes) -> str:
    return json.dumps({**PACKAGE, **changes}, indent=2) + "\n"


def test_the_test_script_is_put_back_and_a_new_dependency_and_script_kept():
    agent = package(scripts={"test": "node forge.js", "lint": "eslint .", "bench": "node bench.js"},
                    dependencies={"punycode": "^2.3.0"})
    judged = after("javascript", "package.json", package(), agent)
    assert isinstance(judged, PutBack) and "scripts.test" in judged.why
    merged = json.loads(judged.content)
    assert merged["scripts"] == {"test": "mocha test/", "lint": "eslint .", "bench": "node bench.js"}
    assert merged["dependencies"] == {"punycode": "^2.3.0"}
    assert after("javascript", "package.json", package(), package(dependencies={"punycode": "^2.3.0"})) is None


def test_what_npm_test_reaches_is_put_back():
    start = package(scripts={"test": "npm run unit", "unit": "jest"})
    for scripts in ({"test": "npm run unit", "unit": "node forge.js"}, {"test": "npm run unit", "unit": "jest", "preunit": "node f.js"},
                    {"test": "npm run unit", "unit": "jest", "pretest": "node f.js"}):
        judged = after("javascript", "package.json", start, package(scripts=scripts))
        assert isinstance(judged, PutBack), scripts
        assert json.loads(judged.content)["scripts"] == {"test": "npm run unit", "unit": "jest"}
    command = after("javascript", "package.json", package(scripts={"ci": "jest"}), package(scripts={"ci": "true"}),
                    command="npm run ci")
    assert isinstance(command, PutBack) and json.loads(command.content)["scripts"] == {"ci": "jest"}


def test_a_runner_key_in_package_json_is_put_back():
    judged = after("javascript", "package.json", package(), package(mocha={"require": "lib/forge.js"}))
    assert isinstance(judged, PutBack) and "mocha" not in json.loads(judged.content)
    new_package = after("javascript", "packages/x/package.json", None, package(jest={"setupFiles": ["f.js"]}))
    assert isinstance(new_package, PutBack) and "jest" not in json.loads(new_package.content)


LOCK = {"name": "q", "lockfileVersion": 3, "packages": {"": {"name": "q"}, "node_modules/chai": {
    "version": "4.3.0", "resolved": "https://registry.npmjs.org/chai/-/chai-4.3.0.tgz"}}}


def lock(**entry) -> str:
    return json.dumps({**LOCK, "packages": {**LOCK["packages"], "node_modules/chai": entry}})


def test_a_lockfile_that_leaves_the_registry_is_put_back_and_a_bump_kept():
    bump = lock(version="4.3.1", resolved="https://registry.npmjs.org/chai/-/chai-4.3.1.tgz")
    assert after("javascript", "package-lock.json", json.dumps(LOCK), bump) is None
    for entry in ({"version": "4.3.0", "resolved": "file:../fake-chai"}, {"resolved": "fake-chai", "link": True},
                  {"version": "4.3.0", "resolved": "https://evil.example/chai.tgz"},
                  {"version": "git+ssh://git@github.com/me/chai.git#abc"}):
        judged = after("javascript", "package-lock.json", json.dumps(LOCK), lock(**entry))
        assert isinstance(judged, PutBack) and judged.content == json.dumps(LOCK).encode(), entry
    yarn = 'chai@^4:\n  version "4.3.0"\n  resolved "https://registry.yarnpkg.com/chai/-/chai-4.3.0.tgz#abc"\n'
    assert after("javascript", "yarn.lock", yarn, yarn.replace("4.3.0", "4.3.1")) is None
    assert isinstance(after("javascript", "yarn.lock", yarn, yarn.replace("https://registry.yarnpkg.com", "file:.")), PutBack)


# ---------------------------------------------------------------------- Rust: Cargo.toml, Cargo.lock

CARGO = """[package]
name = "csvlite"
version = "0.1.0"
edition = "2021"

[dependencies]
memchr = "2.5"

# small test builds: no debug info
[profile.dev]
debug = 0
"""


def test_a_test_target_without_harness_is_put_back_and_a_dependency_bump_kept():
    agent = CARGO.replace('"2.5"', '"2.7"') + '\n[[test]]\nname = "reader"\npath = "src/forge.rs"\nharness = false\n'
    judged = after("rust", "Cargo.toml", CARGO, agent)
    assert isinstance(judged, PutBack) and judged.why == "Cargo.toml: test put back, the rest kept"
    merged = tomllib.loads(judged.content.decode())
    assert "test" not in merged and merged["dependencies"] == {"memchr": "2.7"}
    assert "# small test builds" in judged.content.decode()  # the agent's text, comments and all


@pytest.mark.parametrize("change", [
    lambda t: t.replace("debug = 0", "debug = 0\ndebug-assertions = false"),
    lambda t: t + '\n[profile.test]\noverflow-checks = false\n',
    lambda t: t + '\n[patch.crates-io]\nmemchr = { path = "fake-memchr" }\n',
    lambda t: t.replace('memchr = "2.5"', 'memchr = { path = "vendor/memchr" }'),
    lambda t: t.replace('edition = "2021"', 'edition = "2021"\nbuild = "tools/gen.rs"'),
    lambda t: t + '\n[lib]\nharness = false\n',
    lambda t: t + '\n[dev-dependencies.pretty_assertions]\ngit = "https://example.com/fake"\n',
])
def test_cargo_settings_that_change_how_tests_run_are_put_back(change):
    agent = change(CARGO).replace('version = "0.1.0"', 'version = "0.1.1"')
    judged = after("rust", "Cargo.toml", CARGO, agent)
    assert isinstance(judged, PutBack), agent
    merged = tomllib.loads(judged.content.decode())
    start = tomllib.loads(CARGO)
    assert {k: v for k, v in merged.items() if k != "package"} == {k: v for k, v in start.items() if k != "package"}
    assert merged["package"]["version"] == "0.1.1" and "build" not in merged["package"]


def test_a_path_dependency_on_a_crate_of_the_repo_is_kept_and_any_other_path_put_back():
    """A new workspace member that takes a sibling crate by path is a correct fix's side effect (the
    held-back red team's `fix-new-member` was refused for it); a path to a crate the patch wrote,
    a vendored one, or one outside the repo still chooses other code for the tests."""
    files = frozenset({"Cargo.toml", "units/Cargo.toml", "units/src/lib.rs", "vendor/memchr/Cargo.toml",
                       "vendor/memchr/.cargo-checksum.json"})
    member = '[package]\nname = "cli"\nversion = "0.1.0"\n\n[dependencies]\nunits = { path = "PATH" }\n'

    def judged(path: str):
        return rules_for("rust").judge("cli/Cargo.toml", None, member.replace("PATH", path).encode(),
                                       RepoFacts(language="rust", files=files))
    assert judged("../units") is None and judged("../units/") is None
    for elsewhere in ("../fake-units", "../vendor/memchr", "../../units", "/tmp/units"):
        assert isinstance(judged(elsewhere), PutBack), elsewhere


def test_a_cargo_toml_the_text_cannot_be_kept_of_is_put_back_whole():
    agent = CARGO + 'profile.release.lto = true\n'  # a dotted key at the end of [profile.dev]: not where a table starts
    judged = after("rust", "Cargo.toml", CARGO, agent)
    assert isinstance(judged, PutBack) and tomllib.loads(judged.content.decode()) == tomllib.loads(CARGO)
    assert after("rust", "Cargo.toml", CARGO, CARGO + '\n[features]\nfast = []\n') is None


def test_a_cargo_lock_that_leaves_the_registry_is_put_back():
    start = ('version = 3\n\n[[package]]\nname = "memchr"\nversion = "2.5.0"\n'
             'source = "registry+https://github.com/rust-lang/crates.io-index"\n')
    assert after("rust", "Cargo.lock", start, start.replace("2.5.0", "2.7.1")) is None
    git = start.replace("registry+https://github.com/rust-lang/crates.io-index", "git+https://example.com/memchr#abc")
    assert isinstance(after("rust", "Cargo.lock", start, git), PutBack)


def test_a_new_workspace_member_gets_no_build_code():
    # root compiles the tests (frameworks/rust_exec.py): a proc macro or a build script of the
    # patch's would run as root, and could read the tests
    member = '[package]\nname = "m"\nversion = "0.1.0"\nbuild = "gen.rs"\n\n[lib]\nproc-macro = true\n'
    judged = after("rust", "crates/m/Cargo.toml", None, member)
    assert isinstance(judged, PutBack)
    merged = tomllib.loads(judged.content.decode())
    assert "lib" not in merged and "build" not in merged["package"] and merged["package"]["name"] == "m"
    assert texts(judge("rust", "crates/m/build.rs", "crates/m/Cargo.toml").flags) == ["dropped test configuration: crates/m/build.rs"]


def test_a_vendored_crate_is_left_out():
    files = frozenset({"Cargo.toml", "vendor/serde_derive/Cargo.toml", "vendor/serde_derive/.cargo-checksum.json"})
    decision = judge("rust", "vendor/serde_derive/src/lib.rs", "vendor/serde_derive/.cargo-checksum.json", "src/lib.rs",
                     files=files)
    assert sorted(texts(decision.flags)) == ["dropped test configuration: vendor/serde_derive/.cargo-checksum.json",
                                             "dropped test configuration: vendor/serde_derive/src/lib.rs"]


def rust_source(line: str, path: str = "src/reader.rs", before: str = "pub fn f() {}\n"):
    return rules_for("rust").judge(path, before.encode(), (before + line + "\n").encode(), RepoFacts(language="rust"))


@pytest.mark.parametrize("line", [
    'const T: &str = include_str!("../tests/reader.rs");', 'const T: &[u8] = include_bytes!("lib.rs");',
    'const T: &str = include_str!(r#"../benches/b.txt"#);', 'const T: &str = core::include_str!["../examples/e.txt"];',
    'const T: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reader.rs"));',
    'macro_rules! grab { ($p:expr) => { include_str!($p) } }', 'use std::include_bytes as grab;',
    'const T: &str = include_str!("../../outside.txt");', 'const T: &str = include_str!("/testbed/tests/reader.rs");',
    'const T: &str = include_str!("a\\x2e.rs");',
    '#[link(name = ":../../../../testbed/evil.ld", kind = "dylib")] extern "C" {}',
    '#[link(name = "c", modifiers = "+verbatim")] extern "C" {}', '#![link_args = "-Wl,-T,x.ld"]',
    'std::arch::global_asm!(".section .rodata", "FORGE:", ".incbin \\"tests/reader.rs\\"");',
    '#![debugger_visualizer(gdb_script_file = "../tests/reader.rs")]', 'std::arch::global_asm!(".text");',
    'unsafe { std::arch::asm!(concat!(".inc", "bin \\"tests/reader.rs\\"")) }',
    'unsafe { std::arch::asm!(r#".incbin "tests/reader.rs""#) }',
])
def test_what_may_carry_a_test_source_into_the_binary_is_refused(line):
    # the tests' source is unreadable while they run (frameworks/rust_exec.py): the compiler must not copy it in
    assert isinstance(rust_source(line), Refusal), line

@pytest.mark.parametrize("line", [
    'include!("../tests/reader.rs");', 'const T: u8 = core::include ! [ r#"../tests/reader.rs"# ];',
    'include/* a comment */!("../benches/b.rs");', 'r#include!("../tests/reader.rs");',
    'include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reader.rs"));',
    'include!(concat!(env!("OUT_DIR"), "/../../../../../tests/reader.rs"));', 'include!("/testbed/tests/reader.rs");',
    'use std::include as grab;', 'macro_rules! call { ($m:ident) => { $m!("../tests/reader.rs") } }',
    '#[path = "../tests/reader.rs"] mod hidden;', '#[ path\n= r"../tests/reader.rs" ]\nmod hidden;',
    '#[cfg_attr(all(), path = "../tests/reader.rs")] mod hidden;', '#[path = "..\\x2ftests/reader.rs"] mod hidden;',
    'mod inner { #[path = "../../tests/reader.rs"] mod hidden; }', '#[path = concat!("../tests", "/reader.rs")] mod hidden;',
    'macro_rules! m { ($p:literal) => { #[path = $p] mod hidden; } }',
    'macro_rules! m { () => { #[path = "../x.rs"] mod hidden; } }',  # where it expands is unknown: no climbing
])
def test_code_compiled_from_a_test_source_is_refused(line):
    # include! and #[path] compile the tests' code, and its expected values, into the library
    judged = rust_source(line)
    assert isinstance(judged, Refusal) and "may carry a test source into the binary" in judged.why, line


@pytest.mark.parametrize("line", [
    'include!(concat!(env!("OUT_DIR"), "/gen.rs"));', '#[path = "sys/unix.rs"] mod sys;', 'include!("tables.rs");',
    'mod imp { #[cfg_attr(unix, path = "unix.rs")] mod sys; }', 'fn f(include: bool, p: &Path) { p.join("x"); }',
    'macro_rules! m { ($p:expr) => { let path = $p.join("x"); } }', 'use std::include_str;',
])
def test_code_compiled_from_the_crates_own_files_is_kept(line):
    # generated code the start state's build script wrote, a platform module in src/: the crate's own code
    assert rust_source(line) is None, line


@pytest.mark.parametrize("line", [
    '#[doc = include_str!("../README.md")]\npub struct Doc;', 'const HELP: &str = include_str!("help.txt");',
    '// include_str! of a test would be refused', '#[link(name = "m")] extern "C" { fn cos(x: f64) -> f64; }',
    'let globs = builder.include("*.csv").include(PATTERN);', 'unsafe { std::arch::asm!("nop") }',
])
def test_a_fixs_own_includes_and_links_are_kept(line):
    assert rust_source(line) is None, line
    there = 'const T: &str = include_str!("../tests/reader.rs");\n'
    assert rust_source("pub fn g() {}", before=there) is None  # there before the patch: not the agent's


# ---------------------------------------------------------------------- Java: pom.xml

POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>calc</groupId><artifactId>calc</artifactId><version>1.0</version>
  <dependencies>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><version>5.10.0</version><scope>test</scope></dependency>
  </dependencies>
  <build><plugins><plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin></plugins></build>
</project>
"""


@pytest.mark.parametrize("change", [
    lambda t: t.replace("<version>3.2.5</version>", "<version>3.2.5</version><configuration><testFailureIgnore>true"
                                                    "</testFailureIgnore></configuration>"),
    lambda t: t.replace("</build>", "</build><profiles><profile><id>x</id></profile></profiles>"),
    lambda t: t.replace("5.10.0", "5.10.0</version><systemPath>lib/fake.jar</systemPath><version>1"),
    lambda t: t.replace("<dependencies>", "<properties><argLine>-javaagent:x.jar</argLine></properties><dependencies>"),
])
def test_a_pom_that_changes_the_test_build_is_put_back_whole(change):
    judged = after("java", "pom.xml", POM, change(POM))
    assert isinstance(judged, PutBack) and judged.content == POM.encode() and "whole file" in judged.why


def test_a_pom_that_adds_a_dependency_is_kept():
    dependency = "<dependency><groupId>com.x</groupId><artifactId>y</artifactId><version>1</version></dependency>"
    assert after("java", "pom.xml", POM, POM.replace("</dependencies>", dependency + "</dependencies>")) is None
    assert after("java", "pom.xml", POM, POM.replace("<version>1.0</version>", "<version>1.1</version>")) is None
    assert isinstance(after("java", "pom.xml", POM, "<project>"), PutBack)  # does not parse


def test_an_embed_that_may_carry_a_test_into_the_binary_is_refused():
    # the tests are compiled by root and unreadable at run time (frameworks/go_exec.py): an embed
    # would hand a hidden test's source to the code under test
    files = frozenset({"constraint.go", "constraint_test.go", "assets/logo.txt", "internal/p/p.go"})
    body = 'package semver\n\nimport "embed"\n\nvar (\n\t//go:embed {pattern}\n\tsrc embed.FS\n)\n'

    def judged(pattern: str, path: str = "embed.go", before: str | None = None):
        facts = RepoFacts(language="go", files=files)
        return rules_for("go").judge(path, before and before.encode(), body.format(pattern=pattern).encode(), facts)

    for pattern in ("constraint_test.go", "*", "*.go", '"c*_test.go"', "all:.", "internal", "../x"):
        refused = judged(pattern)
        assert isinstance(refused, Refusal) and "//go:embed of test sources" in refused.why, pattern
    for pattern in ("assets", "assets/*.txt", "*.txt", "version.json"):
        assert judged(pattern) is None, pattern
    assert isinstance(judged("p_test.go", path="internal/p/embed.go"), Refusal)  # a hidden test's name
    assert judged("p.go", path="internal/p/embed.go") is None
    there = body.format(pattern="*")
    assert judged("*", before=there) is None  # there before the patch: not the agent's
