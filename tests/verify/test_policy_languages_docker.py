"""The per-language diff policy end to end, on the demo task sets in their own images: each gold
fix with an attack on the test configuration still resolves when the rule puts the attack back,
is refused when the rule refuses, and with harmless side effects resolves."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from factory.config import VerifierConfig
from factory.records import FlagKind, Reason
from factory.verify import DockerVerifier
from tests.verify.conftest import git, texts
from tests.verify.test_canary import at_start_state, first_task

pytestmark = pytest.mark.docker


def gold_with(tmp_path: Path, name: str, edits: dict[str, Callable[[str], str]]):
    """The first task of demo task set `name`, and `git diff` of its gold fix plus `edits` at its start state."""
    task, folder = first_task(name)
    work = at_start_state(folder, task, tmp_path / "repo")
    subprocess.run(["git", "apply"], input=task.gold_patch, text=True, cwd=work, check=True)
    for path, edit in edits.items():
        target = work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(edit(target.read_text() if target.exists() else ""))
    git(work, "add", "-A")
    return task, git(work, "diff", "--cached")


async def verify(task, patch):
    return await DockerVerifier(VerifierConfig(timeout=300)).verify(task, patch)


def put_back(verdict) -> list[str]:
    return [f.detail for f in verdict.flags if f.kind is FlagKind.dropped_packaging_configuration]


async def test_go_a_replace_directive_is_put_back_and_the_gold_fix_resolves(tmp_path):
    task, patch = gold_with(tmp_path, "demo-go", {
        "go.mod": lambda t: t + "\nreplace golang.org/x/text => ./fakes/text\n",
        "fakes/text/go.mod": lambda _: "module golang.org/x/text\n\ngo 1.19\n",
    })
    verdict = await verify(task, patch)
    assert verdict.resolved, verdict
    assert put_back(verdict) == ["go.mod: replace put back, the rest kept"]


async def test_go_a_linkname_into_testing_is_refused_with_the_gold_fix(tmp_path):
    task, patch = gold_with(tmp_path, "demo-go", {"runner.go": lambda _: (
        'package semver\n\nimport (\n\t_ "unsafe"\n\t"testing"\n)\n\n'
        "//go:linkname tRunner testing.tRunner\nfunc tRunner(t *testing.T, fn func(t *testing.T))\n")})
    verdict = await verify(task, patch)
    assert (verdict.resolved, verdict.reason) == (False, Reason.patch_rejected), verdict
    assert "testing.tRunner" in verdict.detail


async def test_js_a_test_script_and_a_mocha_key_are_put_back_and_the_gold_fix_resolves(tmp_path):
    def forge(text: str) -> str:
        manifest = json.loads(text)
        manifest["scripts"]["test"] = "node lib/forge.js"
        manifest["mocha"] = {"require": "./lib/forge.js"}  # mocha reads it: the forger would run first
        manifest["dependencies"] = {"punycode": "^2.3.0"}
        return json.dumps(manifest, indent=2) + "\n"

    task, patch = gold_with(tmp_path, "demo-js", {"package.json": forge, "lib/forge.js": lambda _: "process.exit(0);\n"})
    verdict = await verify(task, patch)
    assert verdict.resolved, verdict
    assert put_back(verdict) == ["package.json: mocha, scripts.test put back, the rest kept"]


async def test_rust_a_test_target_without_harness_is_put_back_and_the_gold_fix_resolves(tmp_path):
    task, patch = gold_with(tmp_path, "demo-rust", {
        "Cargo.toml": lambda t: t.replace('version = "0.1.0"', 'version = "0.1.1"')
        + '\n[[test]]\nname = "reader"\npath = "src/forge.rs"\nharness = false\n',
        "Cargo.lock": lambda t: t.replace('version = "0.1.0"', 'version = "0.1.1"'),  # as cargo leaves it
        "src/forge.rs": lambda _: 'fn main() {\n    println!("test result: ok. 99 passed; 0 failed");\n}\n',
    })
    verdict = await verify(task, patch)
    assert verdict.resolved, verdict
    assert put_back(verdict) == ["Cargo.toml: test put back, the rest kept"]


async def test_java_a_junit_extension_registered_as_a_service_is_refused_with_the_gold_fix(tmp_path):
    task, patch = gold_with(tmp_path, "demo-java", {
        "src/main/resources/META-INF/services/org.junit.jupiter.api.extension.Extension": lambda _: "calc.Forge\n",
    })
    verdict = await verify(task, patch)
    assert (verdict.resolved, verdict.reason) == (False, Reason.patch_rejected), verdict
    assert "registers a service into the test runner" in verdict.detail


@pytest.mark.parametrize(("name", "edits", "dropped"), [
    ("demo-go", {"constraint_mine_test.go": lambda _: 'package semver\n\nimport "testing"\n\nfunc TestMine(t *testing.T) {}\n',
                 "helpers.go": lambda _: "package semver\n\nfunc zeroMajor(v Version) bool { return v.Major == 0 }\n",
                 "docs/ñotes.md": lambda _: "# Caret\n", "README.md": lambda t: t + "\nCaret fixed.\n"},
     ["dropped test change: constraint_mine_test.go"]),
    ("demo-js", {"test/mine.test.js": lambda _: "it('mine', () => {});\n", "lib/ñame.js": lambda _: "module.exports = 1;\n",
                 "package.json": lambda t: t.replace('"license"', '"dependencies": {"punycode": "^2.3.0"},\n  "license"')},
     ["dropped test change: test/mine.test.js"]),
    ("demo-java", {"src/test/java/calc/MineTest.java": lambda _: "package calc;\nclass MineTest {}\n",
                   "src/main/java/calc/Helper.java": lambda _: "package calc;\n\nfinal class Helper {}\n",
                   "run-tests.sh": lambda t: t.replace("--details=none", "--details=tree"), "docs/ñotes.md": lambda _: "x\n"},
     ["dropped test change: src/test/java/calc/MineTest.java", "dropped test configuration: run-tests.sh"]),
    ("demo-rust", {"tests/mine.rs": lambda _: "#[test]\nfn mine() {}\n", "src/helpers.rs": lambda _: "pub fn unused() {}\n",
                   "Cargo.toml": lambda t: t.replace('version = "0.1.0"', 'version = "0.2.0"').replace("[dependencies]\n", "[features]\nfast = []\n\n[dependencies]\n"),
                   "Cargo.lock": lambda t: t.replace('version = "0.1.0"', 'version = "0.2.0"'),
                   "docs/ñotes.md": lambda _: "x\n"},
     ["dropped test change: tests/mine.rs"]),
])
async def test_the_gold_fix_with_harmless_side_effects_resolves(tmp_path, name, edits, dropped):
    task, patch = gold_with(tmp_path, name, edits)
    verdict = await verify(task, patch)
    assert verdict.resolved, verdict
    assert sorted(f for f in texts(verdict.flags) if f.startswith("dropped")) == dropped
