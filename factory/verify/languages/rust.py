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
patch points at a path, a git repo, another registry or another package, are put back at their
start state; the rest of the agent's text is kept (`tomltext.py`), so a version bump or a new
feature resolves. Cargo.lock entries that leave the registry put the lockfile back (`lockfiles.py`).
"""

from __future__ import annotations

import tomllib

from factory.records import FlagKind
from factory.verify.facts import RepoFacts, name_of, parent_of
from factory.verify.languages import lockfiles, tomltext
from factory.verify.languages.base import Judgement, PutBack, Rules, under
from factory.verify.languages.tomltext import MISSING, Key

TEST_FOLDERS = frozenset({"tests"})
JUDGED_TABLES = ("lib", "test", "bin", "bench", "example", "profile", "patch", "replace")
PACKAGE_KEYS = ("build", "autotests", "autobenches", "autobins", "autoexamples", "autolib")
DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies", "dev_dependencies", "build_dependencies")
SOURCE_KEYS = frozenset({"path", "git", "registry", "registry-index", "package", "branch", "tag", "rev"})
"""Keys of a dependency that say where its code comes from, not which version of it."""


class RustRules(Rules):
    language = "rust"

    def dropped(self, path: str, facts: RepoFacts) -> FlagKind | None:
        name = name_of(path)
        manifest = f"{parent_of(path)}/Cargo.toml".lstrip("/")
        if (name == "build.rs" and (manifest in facts.files or manifest in facts.patched)
                or under(path, frozenset({".cargo"})) and name.startswith("config")
                or name.startswith("rust-toolchain")):
            return FlagKind.dropped_test_configuration
        return FlagKind.dropped_test_change if under(path, TEST_FOLDERS) else None

    def read_after(self, path: str) -> bool:
        return name_of(path) in ("Cargo.toml", "Cargo.lock")

    def judge(self, path: str, before: bytes | None, after: bytes | None, facts: RepoFacts) -> Judgement:
        if name_of(path) == "Cargo.lock":
            off = lockfiles.off_registry("Cargo.lock", before, after)
            return PutBack(before, f"{path}: resolves off the registry: {', '.join(off[:3])}") if off else None
        old_text, new_text = ((b or b"").decode(errors="replace") for b in (before, after))
        try:
            old, new = tomllib.loads(old_text), tomllib.loads(new_text)
        except tomllib.TOMLDecodeError:
            return PutBack(before, f"{path}: does not parse as TOML (the whole file put back)")
        keys = sorted(k for k in _judged(old) | _judged(new) if tomltext.get(old, k) != tomltext.get(new, k))
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
