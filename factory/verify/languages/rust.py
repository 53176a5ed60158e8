"""Rust: integration tests, build scripts, and the parts of Cargo.toml that choose how `cargo test`
builds and runs the tests or which code they import.

Dropped and flagged: `tests/` (test changes); `build.rs` next to a Cargo.toml, `.cargo/config*`,
`rust-toolchain*` (test configuration). A build script runs at build time as the tests' user and
can hand the test binaries link arguments (`cargo:rustc-link-arg-tests`) and cfgs; `.cargo/config`
can wrap every test binary in a `runner`. Dropped, not refused: left out, nothing of them runs, and
a crate that needed its new build script fails to build, honestly.
Judged after the apply: in Cargo.toml the target tables (`[lib]`, `[[test]]`, `[[bin]]`,
`[[bench]]`, `[[example]]`: `harness = false`, `test = true` make a `main` of the agent's the
runner), `[profile.*]` (debug assertions, overflow checks, panic strategy), `[patch.*]`,
`[replace]`, `package.build` and the target auto-discovery switches, and any dependency that the
patch points at a path (but a crate of the repo's start state), a git repo, another registry or
another package, are put back at their start state; the rest of the agent's text is kept
(`tomltext.py`), so a version bump or a new feature resolves. Cargo.lock entries that leave the registry put the lockfile back (`lockfiles.py`).
Dropped too: changes inside a vendored crate (a folder holding `.cargo-checksum.json`), which is
what the tests import and, for a proc macro or a build script, what compiling runs.

Root compiles the tests and the code under test cannot read them while they run
(`frameworks/rust_exec.py`), so a kept `.rs` file that adds an `include_str!`/`include_bytes!`
that may carry a test source into the binary refuses the patch (any path but a literal that
names no `.rs` file and nothing under `tests/`, `benches/`, `examples/` or outside its crate's
reach: `#[doc = include_str!("../README.md")]` is kept), as does a renamed one, a `#[link]`
that hands the linker a path or a verbatim name (`-l:../../repo/x.ld`: a linker script can carry
a file into the binary), an assembler `.incbin`/`.include` (`global_asm!`) and a
`#[debugger_visualizer]`; `link_args` and `link-arg` are refused outright.
"""

from __future__ import annotations

import posixpath
import re
import tomllib

from factory.records import FlagKind
from factory.verify.facts import RepoFacts, name_of, parent_of
from factory.verify.languages import lockfiles, tomltext
from factory.verify.languages.base import Judgement, PutBack, Refusal, Rules, under
from factory.verify.languages.tomltext import MISSING, Key

TEST_FOLDERS = frozenset({"tests"})
JUDGED_TABLES = ("lib", "test", "bin", "bench", "example", "profile", "patch", "replace")
PACKAGE_KEYS = ("build", "autotests", "autobenches", "autobins", "autoexamples", "autolib")
DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies", "dev_dependencies", "build_dependencies")
SOURCE_KEYS = frozenset({"path", "git", "registry", "registry-index", "package", "branch", "tag", "rev"})
"""Keys of a dependency that say where its code comes from, not which version of it."""
VENDORED = ".cargo-checksum.json"
"""In the folder of every crate `cargo vendor` wrote: cargo checks the crate's files against it."""
_INCLUDE = re.compile(r"\binclude_(?:str|bytes)\b(?:\s*!\s*[(\[{]\s*(?:(?P<raw>r#*)\"|\")?|\s+as\b)?")
_LINK = re.compile(r"#\s*!?\s*\[\s*link\s*\((?P<args>[^)]*)\)|\blink_args\b|\blink[-_]arg\b")
_READ_IN = re.compile(r'\.(?:incbin|include)\s+\\?"|\bglobal_asm\b|\basm!\s*[(\[{][^;]*?\bconcat!|\bdebugger_visualizer\b')
"""What else reads a file into the binary: an assembler directive (`.incbin "tests/x.rs"` in an
`asm!`, a `global_asm!` (refused whole: rare in a fix, and its template may be built by `concat!`),
an `asm!` template built by `concat!`), and `#[debugger_visualizer]` (its script file goes into a
debug section). A method named `include` is none of these."""
TEST_SOURCES = frozenset({"tests", "benches", "examples"})
"""Folders whose files cargo builds as test, bench and example targets."""


class RustRules(Rules):
    language = "rust"

    def dropped(self, path: str, facts: RepoFacts) -> FlagKind | None:
        name = name_of(path)
        manifest = f"{parent_of(path)}/Cargo.toml".lstrip("/")
        if (name == "build.rs" and (manifest in facts.files or manifest in facts.patched)
                or under(path, frozenset({".cargo"})) and name.startswith("config")
                or name.startswith("rust-toolchain")):
            return FlagKind.dropped_test_configuration
        if _vendored(path, facts.files):
            return FlagKind.dropped_test_configuration
        return FlagKind.dropped_test_change if under(path, TEST_FOLDERS) else None

    def read_after(self, path: str) -> bool:
        return name_of(path) in ("Cargo.toml", "Cargo.lock") or path.endswith(".rs")

    def judge(self, path: str, before: bytes | None, after: bytes | None, facts: RepoFacts) -> Judgement:
        if path.endswith(".rs"):
            old, new = ((b or b"").decode(errors="replace") for b in (before, after))
            carried = sorted(_includes(new, parent_of(path)) - _includes(old, parent_of(path)))
            if carried:
                return Refusal(f"{path}: may carry a test source into the binary: {', '.join(carried[:3])}")
            linked = sorted(_links(new) - _links(old))
            if linked:
                return Refusal(f"{path}: hands the linker a path: {', '.join(linked[:3])}")
            read_in = sorted(_found(_READ_IN, new) - _found(_READ_IN, old))
            return Refusal(f"{path}: would read a file into the binary: {', '.join(read_in[:3])}") if read_in else None
        if name_of(path) == "Cargo.lock":
            off = lockfiles.off_registry("Cargo.lock", before, after)
            return PutBack(before, f"{path}: resolves off the registry: {', '.join(off[:3])}") if off else None
        old_text, new_text = ((b or b"").decode(errors="replace") for b in (before, after))
        try:
            old, new = tomllib.loads(old_text), tomllib.loads(new_text)
        except tomllib.TOMLDecodeError:
            return PutBack(before, f"{path}: does not parse as TOML (the whole file put back)")
        keys = sorted(k for k in _judged(old) | _judged(new) if tomltext.get(old, k) != tomltext.get(new, k)
                      and not _a_crate_of_the_repo(tomltext.get(new, k), parent_of(path), facts.files))
        if not keys:
            return None
        named = ", ".join(".".join(k) for k in keys)
        merged = None if after is None else tomltext.put_back(new_text, old_text, keys)
        if merged is None:
            return PutBack(before, f"{path}: {named} (the whole file put back)")
        return PutBack(merged.encode(), f"{path}: {named} put back, the rest kept")


def _judged(doc: dict) -> set[Key]:
    keys: set[Key] = {(t,) for t in JUDGED_TABLES if t in doc}
    keys |= {("package", k) for k in PACKAGE_KEYS if tomltext.get(doc, ("package", k)) is not MISSING}
    tables: list[Key] = [(t,) for t in DEPENDENCY_TABLES] + [("workspace", "dependencies")]
    targets = doc.get("target")
    if isinstance(targets, dict):
        tables += [("target", cfg, t) for cfg in targets for t in DEPENDENCY_TABLES]
    for table in tables:
        entries = tomltext.get(doc, table)
        if isinstance(entries, dict):
            keys |= {(*table, name) for name, spec in entries.items() if isinstance(spec, dict) and SOURCE_KEYS & spec.keys()}
    return keys


def _a_crate_of_the_repo(spec: object, folder: str, files: frozenset[str]) -> bool:
    """Whether a dependency the patch wrote takes a crate of the repo's start state by its path
    (`units = { path = "../units" }` in a new workspace member): code the patch may change anyway,
    and no stand-in for what the tests import, since cargo refuses a crate whose package name is
    not the dependency's (and `package` renames stay judged). A path to a folder the patch made, or
    to a vendored crate, is still put back."""
    if not isinstance(spec, dict) or SOURCE_KEYS & spec.keys() != {"path"} or not isinstance(spec["path"], str):
        return False
    crate = posixpath.normpath(posixpath.join(folder or ".", spec["path"]))
    manifest = posixpath.join(crate, "Cargo.toml").removeprefix("./")
    return not crate.startswith("..") and manifest in files and not _vendored(manifest, files)


def _vendored(path: str, files: frozenset[str]) -> bool:
    parts = path.split("/")[:-1]
    return any("/".join([*parts[:i], VENDORED]) in files for i in range(1, len(parts) + 1))


def _includes(text: str, folder: str) -> set[str]:
    """The `include_str!`/`include_bytes!` of `text` (a file in `folder`) that may reach a test
    source: each as written, for the refusal. One whose argument is not a plain string literal
    (a `concat!`, `file!()`, a macro's `$path`) or that is renamed (`as grab`) may reach anything."""
    found = set()
    for match in _INCLUDE.finditer(text):
        call = match.group(0).rstrip()
        if call.endswith('"'):  # a string literal: judged by the path it names
            hashes = len(match.group("raw")) - 1 if match.group("raw") else None
            literal = _literal(text, match.end(), hashes)
            if literal is not None and not _may_be_a_test(posixpath.normpath(posixpath.join(folder or ".", literal)), literal):
                continue
        elif not call.endswith(("(", "[", "{", "as")):
            continue  # the name alone, in a comment or a doc: no call
        found.add(text[match.start():match.end() + 60].split("\n")[0])
    return found


def _literal(text: str, start: int, hashes: int | None) -> str | None:
    """The string literal's content from `start` (after its opening quote) when it is closed, and
    followed by its macro's closing delimiter; escapes make it None (a path needs none)."""
    close = '"' + "#" * (hashes or 0)
    end = text.find(close, start)
    if end < 0 or (hashes is None and "\\" in text[start:end]):
        return None
    rest = text[end + len(close):].lstrip()
    return text[start:end] if rest[:1] in (")", "]", "}") else None


def _may_be_a_test(path: str, literal: str) -> bool:
    """A Rust source (any `.rs` may hold `#[cfg(test)]` tests or a planted copy), a file under a
    test, bench or example folder, an absolute path or one that leaves the repo."""
    parts = path.split("/")
    return (literal.startswith("/") or parts[0] == ".." or path.endswith(".rs") or bool(TEST_SOURCES & set(parts))
            or not literal or literal.endswith("/"))


def _found(pattern: re.Pattern, text: str) -> set[str]:
    """Each match of `pattern` in `text` with what follows it on its line, as written."""
    return {text[m.start():m.end() + 60].split("\n")[0] for m in pattern.finditer(text)}


def _links(text: str) -> set[str]:
    """`#[link(...)]` attributes that name a path or a verbatim file, and `link_args`/`link-arg`."""
    found = set()
    for match in _LINK.finditer(text):
        args = match.group("args")
        names = re.findall(r'name\s*=\s*"([^"]*)"', args or "")
        if args is None or "verbatim" in args or any(not re.fullmatch(r"[A-Za-z0-9_.+-]+", n) for n in names):
            found.add(match.group(0)[:80])
    return found
