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
reach: `#[doc = include_str!("../README.md")]` is kept), as does an `include!` or a
`#[path = ...]` (a `mod` compiled from that file, in a `cfg_attr` too) that may reach a test
folder or leave the repo (they compile the tests' code, and its expected values, into the
library: a `.rs` of the crate's own stays allowed, as does `include!` of what the start state's
build script wrote to `OUT_DIR`), a renamed one or one a macro names by its argument (`$m!`), a `#[link]`
that hands the linker a path or a verbatim name (`-l:../../repo/x.ld`: a linker script can carry
a file into the binary), an assembler `.incbin`/`.include` (`global_asm!`) and a
`#[debugger_visualizer]`; `link_args` and `link-arg` are refused outright.
"""

from __future__ import annotations

import posixpath
import re
import tomllib

import tree_sitter

from factory.records import FlagKind
from factory.verify.facts import RepoFacts, name_of, parent_of
from factory.verify.frameworks.copies.treesitter import language, source, walk
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
INCLUDES = frozenset({"include", "include_str", "include_bytes"})
"""The macros that read a file at compile time: `include!` as Rust code, the others as data."""
COMMENTS = frozenset({"line_comment", "block_comment"})
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
            carried = sorted(_carried(new, path) - _carried(old, path))
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


def _carried(text: str, path: str) -> set[str]:
    """What in `text` (the Rust file at `path`) may carry a test source into the binary, each as
    written: an `include!`/`include_str!`/`include_bytes!` or a `#[path]` (on a `mod`, in a
    `cfg_attr`, in a macro's body) whose file may be one, a renamed include (`as grab`), a macro
    named by a macro's argument (`$m!(...)`, which may be an include). Read with the grammar, not a
    regular expression: comments and whitespace anywhere between the tokens (`include/**/!`) and
    raw strings are what rustc reads; a file with errors is still walked, token by token."""
    root = tree_sitter.Parser(language("rust")).parse(text.encode()).root_node
    found = set()
    for node in walk(root):
        name = source(node).removeprefix("r#") if node.type in ("identifier", "metavariable") else ""
        if name not in INCLUDES and name != "path" and node.type != "metavariable":
            continue
        while node.parent is not None and node.parent.type == "scoped_identifier":  # std::include!
            node = node.parent
        after = _following(node)
        kinds = [n.type for n in after[:2]]
        if name in INCLUDES and kinds == ["!", "token_tree"]:
            carries = not _harmless_include(after[1], parent_of(path), code=name == "include")
        elif name in INCLUDES:
            carries = kinds[:1] == ["as"]  # a rename; the bare name (a variable, a plain `use`) reads nothing
        elif node.type == "metavariable":
            carries = kinds == ["!", "token_tree"]
        else:  # `path = ...`: a module's file where an attribute says so
            carries = kinds[:1] == ["="] and _path_may_reach(node, after[1:2], path)
        if carries:
            found.add(source(node) + text.encode()[node.end_byte:node.end_byte + 60].decode(errors="replace").split("\n")[0])
    return found


def _following(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The tokens after `node` among its siblings, comments left out."""
    rest = []
    while (node := node.next_sibling) is not None:
        if node.type not in COMMENTS:
            rest.append(node)
    return rest


def _inside(tree: tree_sitter.Node) -> list[tree_sitter.Node]:
    """A token tree's tokens, its delimiters and comments left out."""
    return [n for n in tree.children[1:-1] if n.type not in COMMENTS]


def _plain(node: tree_sitter.Node) -> str | None:
    """The content of a string literal (raw or not) without escapes or a prefix (`b`, `c`), else None."""
    if node.type not in ("string_literal", "raw_string_literal") or source(node)[:1] not in ('"', "r"):
        return None
    parts = [n for n in node.children if n.is_named]
    return "".join(source(n) for n in parts) if all(n.type == "string_content" for n in parts) else None


def _harmless_include(tree: tree_sitter.Node, folder: str, code: bool) -> bool:
    """Whether an include's argument is a plain literal naming no test source, or
    `concat!(env!("OUT_DIR"), "/gen.rs")`: what the start state's build script wrote (the patch
    adds none, and a package with one is built by the tests' user anyway, `rust_exec.py`). Any
    other argument (a `concat!` of the crate's folder, a macro's `$p`) may reach anything."""
    args = _inside(tree)
    literal = _plain(args[0]) if len(args) == 1 else None
    if literal is not None:
        return not _may_be_a_test(_joined([folder], literal), literal, code)
    if [source(n) for n in args[:2]] == ["concat", "!"] and len(args) == 3 and args[2].type == "token_tree":
        parts = _inside(args[2])
        env = [source(n) for n in parts[:2]] + [source(n) for n in _inside(parts[2])] if len(parts) == 5 else []
        suffix = _plain(parts[4]) if len(parts) == 5 else None
        return (env == ["env", "!", '"OUT_DIR"'] and source(parts[3]) == "," and suffix is not None
                and suffix.startswith("/") and ".." not in suffix.split("/"))
    return False


def _path_may_reach(node: tree_sitter.Node, value: list[tree_sitter.Node], path: str) -> bool:
    """Whether `path = <value>` at `node` may name a test source as a module's file. A module's
    file is found from the file's folder, then the inline modules around it (`mod a { #[path =
    "x.rs"] mod x; }` in src/lib.rs is src/a/x.rs; in a non-mod-rs file src/m.rs, src/m/a/x.rs).
    In an attribute, a value that is no plain literal refuses; elsewhere in a macro's tokens
    (`let path = ...`) only a literal that names a test source is judged."""
    literal = _plain(value[0]) if value else None
    if literal is None:
        return _in_attribute(node)
    folder, nest = parent_of(path), _module_nest(node)
    if nest is None:  # in a macro's body: the modules around its expansion are unknown
        return ".." in literal.split("/") or _may_be_a_test(_joined([folder], literal), literal, code=True)
    bases = [[folder, *nest]] + ([[folder, name_of(path).removesuffix(".rs"), *nest]] if nest else [])
    return any(_may_be_a_test(_joined(base, literal), literal, code=True) for base in bases)


def _joined(folders: list[str], literal: str) -> str:
    return posixpath.normpath(posixpath.join(*[f for f in folders if f] or ["."], literal))


def _module_nest(node: tree_sitter.Node) -> list[str] | None:
    """The names of the inline modules around `node`, outermost first; None inside a macro's tokens."""
    names = []
    while (node := node.parent) is not None:
        if node.type == "token_tree":
            return None
        if node.type == "mod_item" and (name := node.child_by_field_name("name")) is not None:
            names.append(source(name).removeprefix("r#"))
    return names[::-1]


def _in_attribute(node: tree_sitter.Node) -> bool:
    """Whether `node` is in an attribute: a parsed one, or `#[...]` among a macro's tokens."""
    while (node := node.parent) is not None:
        if node.type == "attribute":
            return True
        before = node.prev_sibling
        if node.type == "token_tree" and source(node)[:1] == "[" and before is not None:
            if before.type == "!":
                before = before.prev_sibling
            if before is not None and before.type == "#":
                return True
    return False


def _may_be_a_test(path: str, literal: str, code: bool = False) -> bool:
    """A file under a test, bench or example folder, an absolute path or one that leaves the repo;
    read as data (not `code`), any Rust source too (any `.rs` may hold `#[cfg(test)]` tests or a
    planted copy, and its text would be the binary's). Compiled as code, the crate's own `.rs` is
    only what the crate compiles anyway."""
    parts = path.split("/")
    return (literal.startswith("/") or parts[0] == ".." or (not code and path.endswith(".rs"))
            or bool(TEST_SOURCES & set(parts)) or not literal or literal.endswith("/"))


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
