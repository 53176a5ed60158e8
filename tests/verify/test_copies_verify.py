"""Copies in the verifier, on the demo task sets in their own images: a correct fix resolves with
its copies planted, and code under test that reports every test it can find as passed (sparing
the canary, which it can spot) is caught by a copy it cannot tell from a real hidden test.
"""

from __future__ import annotations

import json

import pytest

from factory.config import VerifierConfig
from factory.records import Check, Reason
from factory.sandbox.images import ensure_images
from factory.tasks import load_taskset
from factory.verify import DockerVerifier
from tests.verify.test_canary import TASKSETS, patch_of

pytestmark = pytest.mark.docker
COPIED = {  # a task of each set whose FAIL_TO_PASS tests have sites to change
    "demo-go": "factory-demo__semver.numeric-prerelease-order",
    "demo-rust": None, "demo-java": None, "demo-js": None,
}


def task_of(name: str):
    folder = TASKSETS / name
    tasks = load_taskset(str(folder), skip_invalid=False).tasks
    task = next(t for t in tasks if t.instance_id == COPIED[name]) if COPIED[name] else tasks[0]
    ensure_images([task], folder)
    return task, folder


def verifier() -> DockerVerifier:
    return DockerVerifier(VerifierConfig(timeout=300))


@pytest.mark.parametrize("taskset", sorted(COPIED))
async def test_a_correct_fix_resolves_with_its_copies_planted(taskset):
    task, _ = task_of(taskset)
    verdict = await verifier().verify(task, task.gold_patch)
    assert verdict.resolved, verdict
    assert verdict.controls > 0, verdict.flags
    assert set(verdict.tests) == {*task.FAIL_TO_PASS, *task.PASS_TO_PASS}  # told in the task's own ids


GO_FORGER = '''package semver

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// reports every test of the package as passed, and every id the task may ask for; then ends the
// run before any test does. The test files are unreadable to it (frameworks/go_exec.py), so it
// asks its own binary for the tests' names, which copies and originals share the kind of.
func init() {
	if os.Getenv("FORGE_LISTING") != "" {
		return
	}
	list := exec.Command(os.Args[0], "-test.list", ".*")
	list.Env = append(os.Environ(), "FORGE_LISTING=1")
	out, _ := list.Output()
	for _, name := range strings.Fields(string(out)) {
		if strings.HasPrefix(name, "Test") {
			fmt.Printf("=== RUN   %s\\n--- PASS: %s (0.00s)\\n", name, name)
		}
	}
	for _, id := range strings.Split(IDS, ",") {
		fmt.Printf("=== RUN   %s\\n--- PASS: %s (0.00s)\\n", id, id)
	}
	fmt.Println("PASS")
	os.Exit(0)
}
'''


async def test_go_code_that_reports_every_test_it_finds_as_passed_is_caught(tmp_path):
    task, folder = task_of("demo-go")
    ids = ",".join([*task.FAIL_TO_PASS, *task.PASS_TO_PASS])
    forger = GO_FORGER + f"\nconst IDS = {json.dumps(ids)}\n"
    verdict = await verifier().verify(task, patch_of(tmp_path, folder, task, {"forge.go": lambda _: forger}))
    assert not verdict.resolved and verdict.reason is Reason.tampered, verdict
    # the canary, written as one of the file's tests, is no easier to spare than a copy
    assert verdict.decided_by in (Check.controls, Check.tamper_probe), verdict


JS_FORGER = '''
// on exit, writes the report itself: every test title of the test files passed, but the one
// planted to fail failed, and every title the task may ask for passed
const fs = require("fs"), path = require("path");
process.on("exit", () => {
  const dir = path.join(__dirname, "..", "test"), tests = [];
  for (const file of fs.readdirSync(dir)) {
    const text = fs.readFileSync(path.join(dir, file), "utf8");
    const describe = (text.match(/describe\\(["'](.*?)["']/) || [, ""])[1];
    for (const m of text.matchAll(/\\bit\\(["'](.*?)["'],([^]{0,120})/g)) {
      const title = m[1], full = describe ? describe + " " + title : title;
      const failed = m[2].includes("must fail");
      tests.push({ title, fullTitle: full, err: failed ? { message: "a test that must fail" } : {} });
    }
  }
  for (const full of IDS) tests.push({ title: full, fullTitle: full, err: {} });
  const failures = tests.filter(t => t.err.message), passes = tests.filter(t => !t.err.message);
  const report = { stats: { tests: tests.length, passes: passes.length, failures: failures.length, pending: 0 },
                   tests, passes, failures, pending: [] };
  fs.writeFileSync(path.join(process.env.REPORT_DIR, "mocha-report.json"), JSON.stringify(report));
  process.exitCode = failures.length ? 1 : 0;
});
'''


async def test_js_code_that_writes_the_report_itself_is_caught(tmp_path):
    task, folder = task_of("demo-js")
    forger = JS_FORGER.replace("IDS", json.dumps([*task.FAIL_TO_PASS, *task.PASS_TO_PASS]))
    (repo,) = (folder / "repos").iterdir()
    main = json.loads((repo / "package.json").read_text()).get("main", "index.js")
    assert (repo / main).exists(), main
    patch = patch_of(tmp_path, folder, task, {main: lambda text: text + forger})
    verdict = await verifier().verify(task, patch)
    assert not verdict.resolved and verdict.reason is Reason.tampered, verdict
    assert verdict.decided_by in (Check.controls, Check.tamper_probe), verdict


