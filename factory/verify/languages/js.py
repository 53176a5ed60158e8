"""JavaScript and TypeScript: test files, the runners' configuration, package.json's test keys,
planted packages and lockfiles that leave the registry.

Refused: `node_modules/` and Yarn's PnP loaders (`.pnp.cjs`, `.pnp.loader.mjs`) planted by the
patch: they are what `require` resolves, so they shadow the packages the tests import (an
`assert`, a `chai`, a jest matcher), and left out the rest of the patch was written against them.
Dropped and flagged: test files (`__tests__/`, `test/`, `tests/`, `spec/`, `*.test.*`, `*.spec.*`,
snapshots) and test configuration (jest/vitest/mocha/ava/karma/c8/nyc configs and setup files,
`__mocks__/`, babel/swc configs that transform the tests, `.npmrc` and yarn's rc files, which can
preload code into every node process). Judged after the apply: package.json's test scripts (the
ones `npm test` and the task's command reach) and its `jest`/`mocha`/`vitest`/... keys are put back
at their start state, the rest of the agent's package.json kept (a new dependency or script
resolves); a lockfile that adds an entry off the registry is put back whole (`lockfiles.py`).
"""

from __future__ import annotations

import json
import re
from fnmatch import fnmatchcase

from factory.records import FlagKind
from factory.verify.facts import RepoFacts, name_of
from factory.verify.languages import lockfiles
from factory.verify.languages.base import Judgement, PutBack, Rules, under

SHADOWS = frozenset({"node_modules"})
LOADERS = (".pnp.cjs", ".pnp.js", ".pnp.loader.mjs")
TEST_FOLDERS = frozenset({"__tests__", "test", "tests", "spec", "specs", "__snapshots__"})
TEST_NAMES = ("*.test.*", "*.spec.*", "*.snap", "*_test.js", "*_test.ts")
CONFIG_FOLDERS = frozenset({"__mocks__", ".yarn"})
CONFIG_NAMES = (
    "jest.config.*", "jest.setup.*", "jest.preset.*", "jest-setup.*", "vitest.config.*", "vitest.workspace.*",
    "vitest.setup.*", "vite.config.*", ".mocharc", ".mocharc.*", "ava.config.*", "karma.conf.*", "karma.config.*",
    ".c8rc", ".c8rc.*", ".nycrc", ".nycrc.*", "nyc.config.*", "setupTests.*", "setupJest.*", "setup-tests.*",
    "test-setup.*", "playwright.config.*", "cypress.config.*", "babel.config.*", ".babelrc", ".babelrc.*", ".swcrc",
    ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "bunfig.toml",
)
RUNNER_KEYS = ("jest", "mocha", "vitest", "ava", "c8", "nyc", "babel", "karma")
"""package.json keys the runners read as their configuration."""
WORD = re.compile(r"[\w:.@/-]+")


class JsRules(Rules):
    language = "javascript"

    def refusal(self, path: str, facts: RepoFacts) -> str | None:
        if any(part in SHADOWS for part in path.split("/")) or name_of(path) in LOADERS:
            return f"planted packages shadow what the tests import: {path}"
        return None

    def dropped(self, path: str, facts: RepoFacts) -> FlagKind | None:
        name = name_of(path)
        if under(path, CONFIG_FOLDERS) or any(fnmatchcase(name, p) for p in CONFIG_NAMES):
            return FlagKind.dropped_test_configuration
        if under(path, TEST_FOLDERS) or any(fnmatchcase(name, p) for p in TEST_NAMES):
            return FlagKind.dropped_test_change
        return None

    def read_after(self, path: str) -> bool:
        return name_of(path) in ("package.json", *lockfiles.NPM_LOCKS)

    def judge(self, path: str, before: bytes | None, after: bytes | None, facts: RepoFacts) -> Judgement:
        if name_of(path) != "package.json":
            off = lockfiles.off_registry(name_of(path), before, after)
            return PutBack(before, f"{path}: resolves off the registry: {', '.join(off[:3])}") if off else None
        try:
            old, new = (json.loads(b) if b is not None else {} for b in (before, after))
        except ValueError:
            return PutBack(before, f"{path}: does not parse as JSON (the whole file put back)")
        if not isinstance(old, dict) or not isinstance(new, dict) or after is None:
            return PutBack(before, f"{path}: not an object or removed (the whole file put back)")
        scripts = _test_chain(old, new, facts.command)
        changed = [k for k in RUNNER_KEYS if old.get(k) != new.get(k)]
        changed += [f"scripts.{s}" for s in scripts if _scripts(old).get(s) != _scripts(new).get(s)]
        if not changed:
            return None
        merged = dict(new)
        for key in RUNNER_KEYS:
            _set(merged, key, old)
        if any(c.startswith("scripts.") for c in changed):
            merged["scripts"] = dict(_scripts(new))
            for name in scripts:
                _set(merged["scripts"], name, _scripts(old))
        indent = re.match(r'\{\s*\n([ \t]+)"', after.decode(errors="replace"))
        text = json.dumps(merged, indent=indent[1] if indent else 2, ensure_ascii=False) + "\n"
        return PutBack(text.encode(), f"{path}: {', '.join(changed)} put back, the rest kept")


def _scripts(manifest: dict) -> dict:
    scripts = manifest.get("scripts")
    return scripts if isinstance(scripts, dict) else {}


def _test_chain(old: dict, new: dict, command: str) -> list[str]:
    """The scripts a test run reaches: `test` and its pre/post hooks, the scripts the task's command
    names, and those the start state's chain names in turn (with their own pre/post hooks)."""
    names = set(_scripts(old)) | set(_scripts(new))
    chain, todo = set(), ["test", *(w for w in WORD.findall(command) if w in names)]
    while todo:
        name = todo.pop()
        if name in chain:
            continue
        chain |= {name, f"pre{name}", f"post{name}"}  # npm runs a script's hooks, not the hooks' hooks
        for script in (name, f"pre{name}", f"post{name}"):
            text = _scripts(old).get(script)
            todo += [w for w in WORD.findall(text) if w in names] if isinstance(text, str) else []
    return sorted(chain)


def _set(target: dict, key: str, source: dict) -> None:
    """`target[key]` as it is in `source`: its value, or absent."""
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)
