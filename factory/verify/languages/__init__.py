"""The diff policy's rules per language (`Task.language`): what its test files and test
configuration are, and which parts of its manifests the tests must see at their start state.

    python       pytest's files and configuration, packaging files, shadowing (python.py)
    go           *_test.go, testdata/, go.mod replace/toolchain, go.work, vendor/, go:linkname (go.py)
    javascript   test folders and files, runner configs, package.json's test keys, node_modules,
    typescript     lockfiles that leave the registry (js.py)
    java         src/test/, JUnit service registrations, Surefire/Failsafe in pom.xml, Gradle (java.py)
    rust         tests/, build.rs, Cargo.toml's targets/profiles/patches, .cargo/config (rust.py)

A new language is its module, a `Rules` subclass (`base.py`) and one `LANGUAGES.add` below. A
language no one registered is judged by the rules every language shares (`policy.py`), its
`test/`, `tests/`, `__tests__/`, `testdata/` and `spec/` folders dropped as test changes.
"""

from __future__ import annotations

from factory.registry import Registry
from factory.verify.languages.base import Judgement, PutBack, Refusal, Rules, TestFolders
from factory.verify.languages.go import GoRules
from factory.verify.languages.java import JavaRules
from factory.verify.languages.js import JsRules
from factory.verify.languages.python import PythonRules
from factory.verify.languages.rust import RustRules

LANGUAGES: Registry[Rules] = Registry("language of the diff policy")
LANGUAGES.add("python", PythonRules())
LANGUAGES.add("go", GoRules())
LANGUAGES.add("javascript", JsRules())
LANGUAGES.add("typescript", JsRules())
LANGUAGES.add("java", JavaRules())
LANGUAGES.add("rust", RustRules())

OTHER = TestFolders()


def rules_for(language: str) -> Rules:
    """The rules of `language`; for a language without rules of its own, its test folders are tests."""
    return LANGUAGES.get(language) if language in LANGUAGES else OTHER


__all__ = ["LANGUAGES", "Judgement", "PutBack", "Refusal", "Rules", "rules_for"]
