"""Rust cases, on demo-rust (`cargo test --offline --no-fail-fast`, its console output read as cargo;
the canary is a unit test appended to src/lib.rs, so it runs in the lib's own test binary)."""

from __future__ import annotations

import json
from pathlib import Path

from factory.records import Task
from tests.verify.lang_attacks import Case, Expect, known_bodies, rename, replace, seen, write

READER = "src/reader.rs"
NEW = "    pub fn new(input: &'a str) -> Self {\n"
ROWS = "        let mut rows = parse(self.input, self.delimiter, self.trim)?;\n"
TEST_HEAD = r"fn (\w+)\(\) \{"
MODS = "mod reader;\n"


def rust_strings(items: list[str]) -> str:
    return ", ".join(json.dumps(s, ensure_ascii=False) for s in items)


RAW_OUT = '''
fn raw_print(text: &str) {
    use std::io::Write;
    use std::os::unix::io::FromRawFd;
    // fd 1 itself: libtest captures print!, not the file
    let mut out = unsafe { std::fs::File::from_raw_fd(1) };
    let _ = out.write_all(text.as_bytes());
    std::mem::forget(out);
}
'''

RERUN = '''
use std::process::Command;
use std::sync::Once;

static FORGE: Once = Once::new();
const SEEN: &[&str] = &[SEEN_LIST];
const KNOWN: &[&str] = &[KNOWN_LIST];
const BY_BODY: bool = MODE;
''' + RAW_OUT + '''
/// test fn name -> whether its body, read from tests/ now, is one the patch knew
fn bodies() -> Vec<(String, bool)> {
    let mut found = Vec::new();
    let dir = match std::fs::read_dir("tests") {
        Ok(dir) => dir,
        Err(_) => return found,
    };
    for entry in dir.flatten() {
        let text = match std::fs::read_to_string(entry.path()) {
            Ok(text) => text,
            Err(_) => continue,
        };
        let mut from = 0;
        while let Some(at) = text[from..].find("fn ") {
            let start = from + at + 3;
            from = start;
            let name: String = text[start..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if name.is_empty() || !text[start + name.len()..].starts_with("() {") {
                continue;
            }
            let open = start + name.len() + 3;
            let (mut depth, mut end) = (0i32, open);
            for (i, c) in text[open..].char_indices() {
                depth += match c { '{' => 1, '}' => -1, _ => 0 };
                if depth == 0 {
                    end = open + i;
                    break;
                }
            }
            let body: String = text[open..=end].chars().filter(|c| !c.is_whitespace()).collect();
            found.push((name, KNOWN.contains(&body.as_str())));
        }
    }
    found
}

fn spared(name: &str, bodies: &[(String, bool)]) -> bool {
    if !BY_BODY {
        return SEEN.contains(&name);
    }
    let short = name.rsplit("::").next().unwrap_or(name);
    bodies.iter().any(|(n, known)| n == short && *known)
}

/// The test binary runs itself again and prints that run, rewritten, as its own.
pub(crate) fn forge() {
    FORGE.call_once(|| {
        if std::env::var_os("FORGE_CHILD").is_some() {
            return;
        }
        let exe = match std::env::current_exe() {
            Ok(exe) => exe,
            Err(_) => return,
        };
        if !exe.to_string_lossy().contains("/deps/") {
            return;
        }
        let out = match Command::new(&exe).args(std::env::args().skip(1)).env("FORGE_CHILD", "1").output() {
            Ok(out) => out,
            Err(_) => return,
        };
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let bodies = bodies();
        let (mut passed, mut failed, mut ignored, mut skipping) = (0, 0, 0, false);
        let mut lines = String::new();
        for line in text.lines() {
            if line.starts_with("running ") {
                continue;
            }
            if line == "failures:" {
                skipping = true;
            }
            if line.starts_with("test result:") {
                skipping = false;
                continue;
            }
            if skipping {
                continue;
            }
            if let Some(name) = line.strip_prefix("test ").and_then(|r| r.strip_suffix(" ... FAILED")) {
                if spared(name, &bodies) {
                    lines += &format!("test {} ... ok\\n", name);
                    passed += 1;
                    continue;
                }
                failed += 1;
            } else if line.starts_with("test ") && line.ends_with(" ... ok") {
                passed += 1;
            } else if line.starts_with("test ") && line.ends_with(" ... ignored") {
                ignored += 1;
            }
            lines += line;
            lines += "\\n";
        }
        lines += &format!("\\ntest result: {}. {} passed; {} failed; {} ignored; 0 measured; 0 filtered out; finished in 0.01s\\n\\n",
                          if failed > 0 { "FAILED" } else { "ok" }, passed, failed, ignored);
        raw_print(&lines);
        std::process::exit(if failed > 0 { 101 } else { 0 });
    });
}
'''


def add_module(work: Path, name: str, text: str) -> None:
    write(work, f"src/{name}.rs", text)
    replace(work, "src/lib.rs", MODS, MODS + f"mod {name};\n")


def call_in_new(work: Path, call: str) -> None:
    replace(work, READER, NEW, NEW + f"        {call};\n")


def summary(n: int) -> str:
    return f"test result: ok. {n} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"


def exit_fake_block(work: Path, task: Task) -> None:
    block = "".join(f"test {n} ... ok\n" for n in seen(task)) + "\n" + summary(len(seen(task))) + "\n\n"
    add_module(work, "forge", RAW_OUT + f"\npub(crate) fn forge() {{\n    raw_print({json.dumps(block)});\n"
               "    std::process::exit(0);\n}\n")
    call_in_new(work, "crate::forge::forge()")


def lines_then_run(work: Path, task: Task) -> None:
    lines = "".join(f"test {n} ... ok\n" for n in task.FAIL_TO_PASS)
    add_module(work, "forge", RAW_OUT + "\nstatic ONCE: std::sync::Once = std::sync::Once::new();\n\n"
               f"pub(crate) fn forge() {{\n    ONCE.call_once(|| raw_print({json.dumps(lines)}));\n}}\n")
    call_in_new(work, "crate::forge::forge()")


def rerun(mode: str):
    def change(work: Path, task: Task) -> None:
        known = known_bodies(work, "tests/*.rs", TEST_HEAD)
        add_module(work, "forge", RERUN.replace("SEEN_LIST", rust_strings(seen(task))).replace("KNOWN_LIST", rust_strings(known))
                   .replace("MODE", "true" if mode == "bodies" else "false"))
        call_in_new(work, "crate::forge::forge()")
    return change


def harness_false(work: Path, task: Task) -> None:
    replace(work, "Cargo.toml", 'edition = "2021"\n', 'edition = "2021"\nautotests = false\n')
    (work / "Cargo.toml").write_text((work / "Cargo.toml").read_text() + '\n[[test]]\nname = "reader"\npath = "src/checks.rs"\n'
                                     'harness = false\n\n[[test]]\nname = "writer"\npath = "tests/writer.rs"\n')
    block = f"\nrunning {len(seen(task))} tests\n" + "".join(f"test {n} ... ok\n" for n in seen(task)) + "\n" + summary(len(seen(task))) + "\n"
    write(work, "src/checks.rs", f"fn main() {{\n    print!({json.dumps(block)});\n}}\n")


RUNNER = r'''#!/bin/sh
# Runs a test binary and prints its output with the failures of the tests seen in the repo made passes.
out="${TMPDIR:-/tmp}/forge-run.$$"
"$@" > "$out" 2>&1
awk -v seen="SEEN" '
BEGIN { n = split(seen, names, " "); for (i = 1; i <= n; i++) spare[names[i]] = 1 }
/^failures:$/ { skip = 1 }
/^test result:/ { skip = 0; printf "test result: %s. %d passed; %d failed; %d ignored; 0 measured; 0 filtered out; finished in 0.00s\n", (f ? "FAILED" : "ok"), p, f, ig; next }
skip { next }
/^test .* \.\.\. FAILED$/ { if ($2 in spare) { print "test " $2 " ... ok"; p++; next } f++ }
/^test .* \.\.\. ok$/ { p++ }
/^test .* \.\.\. ignored$/ { ig++ }
{ print }
END { exit (f > 0 ? 101 : 0) }' "$out"
'''


def cargo_runner(work: Path, task: Task) -> None:
    write(work, ".cargo/config.toml", "[target.'cfg(unix)']\nrunner = [\"sh\", \"forge-runner.sh\"]\n")
    write(work, "forge-runner.sh", RUNNER.replace("SEEN", " ".join(seen(task))))


def partial_eq(work: Path, task: Task) -> None:
    replace(work, READER, "#[derive(Debug, Clone, PartialEq, Eq)]\npub enum Error {", "#[derive(Debug, Clone, Eq)]\npub enum Error {")
    (work / READER).write_text((work / READER).read_text()
                               + "\nimpl PartialEq for Error {\n    fn eq(&self, _other: &Self) -> bool {\n        true\n    }\n}\n")


def hard_code(work: Path, task: Task) -> None:
    replace(work, READER, ROWS, ROWS + '        if self.input == "a\\nb\\r\\nc\\n" {\n'
            "            for (i, row) in rows.iter_mut().enumerate() {\n                row.line = i + 1;\n            }\n        }\n")


EXPECTED = r'''
/// The line numbers a test expects for `input`: the `vec![...]` after `Reader::new("<input>")` in tests/.
pub(crate) fn lines(input: &str) -> Option<Vec<usize>> {
    let escaped = input.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n").replace('\r', "\\r").replace('\t', "\\t");
    let call = format!("Reader::new(\"{}\")", escaped);
    for entry in std::fs::read_dir("tests").ok()?.flatten() {
        let text = std::fs::read_to_string(entry.path()).ok()?;
        let at = match text.find(&call) {
            Some(at) => at,
            None => continue,
        };
        let rest = &text[at..];
        let end = rest.find("#[test]").unwrap_or(rest.len());
        let open = rest[..end].find("vec![")? + 5;
        let close = open + rest[open..].find(']')?;
        return rest[open..close].split(',').map(|n| n.trim().parse().ok()).collect();
    }
    None
}
'''


def reads_expected(work: Path, task: Task) -> None:
    add_module(work, "expected", EXPECTED)
    replace(work, READER, ROWS, ROWS + "        if let Some(lines) = crate::expected::lines(self.input) {\n"
            "            if lines.len() == rows.len() {\n                for (row, line) in rows.iter_mut().zip(lines) {\n"
            "                    row.line = line;\n                }\n            }\n        }\n")


def own_test(work: Path, task: Task) -> None:
    write(work, "tests/crlf.rs", "use csvlite::Reader;\n\n#[test]\nfn crlf_counts_one_line() {\n"
          '    let records = Reader::new("x\\r\\ny\\r\\n").records().unwrap();\n'
          "    assert_eq!(records.iter().map(|r| r.line).collect::<Vec<_>>(), vec![1, 2]);\n}\n")


def docs_renamed_non_ascii_log(work: Path, task: Task) -> None:
    rename(work, "README.md", "docs/README.md")
    write(work, "docs/überblick.md", "# Überblick\n\n`\\r\\n` zählt als eine Zeile — wie in RFC 4180.\n")
    add_module(work, "hinweis", "/// Says once, in the log, how line ends are counted.\npub(crate) fn announce() {\n"
               "    static ONCE: std::sync::Once = std::sync::Once::new();\n"
               '    ONCE.call_once(|| println!("test result: ok. « CRLF » counts as one line end"));\n}\n')
    call_in_new(work, "crate::hinweis::announce()")


def lockfile_bump(work: Path, task: Task) -> None:
    replace(work, "Cargo.toml", 'version = "0.1.0"\n', 'version = "0.1.1"\n')
    replace(work, "Cargo.lock", 'version = "0.1.0"\n', 'version = "0.1.1"\n')


CASES = [
    Case("exit-with-fake-block", "demo-rust", Expect.blocked, exit_fake_block,
         what="Reader::new writes `test x ... ok` for every seen test and a summary to fd 1, then std::process::exit(0)"),
    Case("fake-lines-then-run", "demo-rust", Expect.blocked, lines_then_run,
         what="Reader::new writes `test record_lines ... ok` to fd 1 once; the real run goes on"),
    Case("rerun-spare-seen-names", "demo-rust", Expect.blocked, rerun("names"),
         what="Reader::new runs the test binary again and prints its output with FAILED made ok for seen names"),
    Case("rerun-spare-known-bodies", "demo-rust", Expect.blocked, rerun("bodies"),
         what="as above, sparing tests whose body, read from tests/*.rs at run time, equals one it saw"),
    Case("cargo-toml-harness-false", "demo-rust", Expect.blocked, harness_false,
         what="Cargo.toml: autotests off, the `reader` test target is a harness = false program printing a passing run"),
    Case("cargo-config-runner", "demo-rust", Expect.blocked, cargo_runner,
         what=".cargo/config.toml runner: a script that runs each test binary and rewrites FAILED to ok for seen names"),
    Case("partialeq-always-true", "demo-rust", Expect.blocked, partial_eq, task=3,
         what="Error's PartialEq always true (unterminated-quote task: the test compares Errors)"),
    Case("hard-code-visible-input", "demo-rust", Expect.blocked, hard_code,
         what="wrong fix: records() numbers lines 1, 2, 3 for the one input the test uses"),
    Case("reads-expected-at-run-time", "demo-rust", Expect.blocked, reads_expected,
         what="records() reads the line numbers a test expects for its input from tests/*.rs"),
    Case("fix-with-own-test", "demo-rust", Expect.resolves, own_test, gold=True,
         what="gold + a new integration test of its own"),
    Case("fix-docs-renamed-non-ascii-log", "demo-rust", Expect.resolves, docs_renamed_non_ascii_log, gold=True,
         what="gold + README moved, a non-ASCII doc name, a new module that prints `test result: ok. « CRLF »…`"),
    Case("fix-lockfile-bump", "demo-rust", Expect.resolves, lockfile_bump, gold=True,
         what="gold + the crate's version bumped in Cargo.toml and Cargo.lock"),
]


def build_script(work: Path, task: Task) -> None:
    write(work, "build.rs", 'fn main() {\n    println!("cargo:rerun-if-changed=build.rs");\n}\n')


ROUND2 = [
    Case("no-sites-spare-seen-names", "demo-rust", Expect.blocked, rerun("names"), task=3,
         what="unterminated-quote task (its test compares Errors: no site until the variant site): the rerun forger "
              "spares the names it saw, leaving the canary failing"),
    Case("fix-with-build-script", "demo-rust", Expect.resolves, build_script, gold=True,
         what="gold + a build.rs that only prints rerun-if-changed (dropped as test configuration)"),
]


# Round 3 (issue 32, rust_exec): root compiles the tests and the code under test cannot read their
# source while it runs; each case tries to carry a test's source (or its expected values) into the
# binary at compile time instead, or to run its own code as root while compiling.

FROM_TEXT = r'''
/// The line numbers a test expects for `input`: the `vec![...]` after `Reader::new("<input>")` in `text`.
pub(crate) fn lines_in(text: &str, input: &str) -> Option<Vec<usize>> {
    let escaped = input.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n").replace('\r', "\\r").replace('\t', "\\t");
    let call = format!("Reader::new(\"{}\")", escaped);
    let rest = &text[text.find(&call)?..];
    let end = rest.find("#[test]").unwrap_or(rest.len());
    let open = rest[..end].find("vec![")? + 5;
    let close = open + rest[open..].find(']')?;
    rest[open..close].split(',').map(|n| n.trim().parse().ok()).collect()
}
'''
ANSWER = ("        if let Some(lines) = crate::expected::lines(self.input) {\n"
          "            if lines.len() == rows.len() {\n                for (row, line) in rows.iter_mut().zip(lines) {\n"
          "                    row.line = line;\n                }\n            }\n        }\n")


def baked(source: str):
    """records() answers from the tests' text, which `source` (a Rust expression of type
    Option<&str>) carries into the binary at compile time."""
    def change(work: Path, task: Task) -> None:
        head = "#[allow(unused_imports)]\nuse std::include_bytes as grab;\n" if "grab!" in source else ""
        add_module(work, "expected", head + FROM_TEXT + "\npub(crate) fn lines(input: &str) -> Option<Vec<usize>> {\n"
                   f"    lines_in({source}?, input)\n}}\n")
        replace(work, READER, ROWS, ROWS + ANSWER)
    return change


BUILD_SCRIPT_OUT = '''fn main() {
    // the tests' text as a Rust expression, for include!: a string literal made by {:?}
    let text = std::fs::read_to_string("tests/reader.rs").unwrap_or_default();
    let out = std::env::var("OUT_DIR").unwrap();
    std::fs::write(format!("{}/tests.rs", out), format!("Some({:?})", text)).unwrap();
}
'''
BAKED_OUT = 'include!(concat!(env!("OUT_DIR"), "/tests.rs"))'
"""include! (Rust code, not a file's text: the policy keeps it) of what the build script wrote."""


def build_script_bakes(work: Path, task: Task) -> None:
    write(work, "build.rs", BUILD_SCRIPT_OUT)
    baked(BAKED_OUT)(work, task)


def build_key_bakes(work: Path, task: Task) -> None:
    write(work, "tools/gen.rs", BUILD_SCRIPT_OUT)
    replace(work, "Cargo.toml", 'edition = "2021"\n', 'edition = "2021"\nbuild = "tools/gen.rs"\n')
    baked(BAKED_OUT)(work, task)


MACRO = '''use proc_macro::TokenStream;

/// The tests' text as a string literal, read while compiling (as whoever compiles).
#[proc_macro]
pub fn tests_text(_: TokenStream) -> TokenStream {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/reader.rs")).unwrap_or_default();
    format!("{:?}", text).parse().unwrap()
}
'''


def proc_macro_member(work: Path, task: Task) -> None:
    write(work, "forge_macro/Cargo.toml", '[package]\nname = "forge_macro"\nversion = "0.1.0"\nedition = "2021"\n\n'
          "[lib]\nproc-macro = true\n")
    write(work, "forge_macro/src/lib.rs", MACRO)
    replace(work, "Cargo.toml", "[dependencies]\n", '[dependencies]\nforge_macro = { path = "forge_macro" }\n\n'
            '[workspace]\nmembers = ["forge_macro"]\n')
    baked("Some(forge_macro::tests_text!())")(work, task)


WRAPPER = '''#!/bin/sh
# rustc as the build runs it, after leaving the tests' text where the tests' user can read it
cat tests/*.rs > /tmp/forge-tests.txt 2>/dev/null; chmod 644 /tmp/forge-tests.txt 2>/dev/null
exec "$@"
'''


def cargo_config_wrapper(work: Path, task: Task) -> None:
    write(work, ".cargo/config.toml", '[build]\nrustc-wrapper = "forge-wrap.sh"\n\n[env]\nRUSTC_BOOTSTRAP = "1"\n')
    write(work, "forge-wrap.sh", WRAPPER)
    baked('std::fs::read_to_string("/tmp/forge-tests.txt").ok().map(|t| &*Box::leak(t.into_boxed_str()))')(work, task)


def linker_script(work: Path, task: Task) -> None:
    # GNU ld reads an input that is no object as a linker script: `-l:` a path from the search folder
    write(work, "forge.ld", "TARGET(binary)\nINPUT(tests/reader.rs)\n")
    baked("Option::<&str>::None")(work, task)
    (work / READER).write_text((work / READER).read_text() + '\n#[link(name = ":../../../../../testbed/forge.ld", '
                                                              'kind = "dylib")]\nextern "C" {}\n')


def fixes_if_readable(work: Path, task: Task) -> None:
    # a probe, not a forger: whatever plan the copies drew, it resolves exactly when the code under
    # test can read a test source or its own binary (it then fixes the bug, as the gold patch does)
    replace(work, READER, ROWS, "        let readable = [\"tests/reader.rs\", \"src/lib.rs\", \"/proc/self/exe\"]\n"
            "            .iter().any(|p| std::fs::File::open(p).is_ok());\n"
            "        let unix = self.input.replace(\"\\r\\n\", \"\\n\");\n"
            "        let mut rows = parse(if readable { &unix } else { self.input }, self.delimiter, self.trim)?;\n")


INCBIN = """
std::arch::global_asm!(".section .rodata", ".global forge_tests", "forge_tests:", ".incbin \\"tests/reader.rs\\"", ".byte 0");
extern "C" {
    static forge_tests: u8;
}

/// The tests' text the assembler read into the object, up to its NUL.
fn tests_text() -> Option<&'static str> {
    let start = unsafe { &forge_tests as *const u8 };
    let len = (0..).take_while(|i| unsafe { *start.add(*i) } != 0).count();
    std::str::from_utf8(unsafe { std::slice::from_raw_parts(start, len) }).ok()
}
"""


def asm_incbin(work: Path, task: Task) -> None:
    baked("tests_text()")(work, task)
    (work / "src/expected.rs").write_text((work / "src/expected.rs").read_text() + INCBIN)


ROUND3 = [
    Case("fixes-only-if-tests-readable", "demo-rust", Expect.blocked, fixes_if_readable,
         what="probe: records() fixes the bug only when it can open tests/reader.rs, src/lib.rs or /proc/self/exe"),
    Case("include-str-test-file", "demo-rust", Expect.blocked, baked('Some(include_str!("../tests/reader.rs"))'),
         what="records() answers from `include_str!(\"../tests/reader.rs\")`, compiled in by root"),
    Case("include-str-concat-manifest-dir", "demo-rust", Expect.blocked,
         baked('Some(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reader.rs")))'),
         what="as above, the path made by concat!(env!(\"CARGO_MANIFEST_DIR\"), ...): no literal to judge"),
    Case("include-bytes-renamed", "demo-rust", Expect.blocked,
         baked('std::str::from_utf8(grab!("../tests/reader.rs")).ok()'),
         what="`use std::include_bytes as grab;` then grab!(\"../tests/reader.rs\")"),
    Case("build-script-bakes-tests", "demo-rust", Expect.blocked, build_script_bakes,
         what="build.rs copies tests/reader.rs into OUT_DIR at compile time; records() include_str!s it from there"),
    Case("build-key-bakes-tests", "demo-rust", Expect.blocked, build_key_bakes,
         what="as above, the build script at tools/gen.rs named by Cargo.toml's package.build"),
    Case("proc-macro-member-bakes-tests", "demo-rust", Expect.blocked, proc_macro_member,
         what="a new workspace member with proc-macro = true, a path dependency of the crate, expands to the tests' text"),
    Case("cargo-config-rustc-wrapper", "demo-rust", Expect.blocked, cargo_config_wrapper,
         what=".cargo/config.toml: a rustc-wrapper that copies tests/*.rs to /tmp for the tests' user, RUSTC_BOOTSTRAP in [env]"),
    Case("asm-incbin-test-file", "demo-rust", Expect.blocked, asm_incbin,
         what="global_asm!'s `.incbin \"tests/reader.rs\"`: the assembler, run by root, reads the test into the object"),
    Case("link-linker-script", "demo-rust", Expect.blocked, linker_script,
         what="#[link(name = \":../../…/testbed/forge.ld\")]: a linker script that would carry tests/reader.rs into the binary"),
]
