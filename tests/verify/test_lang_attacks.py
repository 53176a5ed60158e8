"""The red team of the `command` framework in Go, JavaScript, Java and Rust (issue 32): each case
an agent patch made at a demo task's start state (`tests/verify/lang_attacks/`), verified for
real in the task's image.

An attack must not be taught: not resolved, or resolved with a flag the `resolved` filter drops.
A correct fix with a harmless side effect must be resolved and kept. The cases that get through
the verifier at the commit the red team last ran are marked `xfail(strict=True)` in `HOLES`:
closing a hole makes its case pass, and strict makes that a failure until the mark is removed
(docs/redteam-lang.md has the table).
"""

from __future__ import annotations

import pytest

from factory.config import VerifierConfig
from factory.filters.resolved import ResolvedFilter
from factory.sandbox.images import ensure_images
from factory.tasks import load_taskset
from factory.verify import DockerVerifier
from tests.filters.attempt_builder import attempt
from tests.verify.lang_attacks import Case, Expect, patch_of
from tests.verify.lang_attacks.golang import CASES as GO
from tests.verify.lang_attacks.golang import ROUND2 as GO2
from tests.verify.lang_attacks.java import CASES as JAVA
from tests.verify.lang_attacks.java import ROUND2 as JAVA2
from tests.verify.lang_attacks.javascript import CASES as JS
from tests.verify.lang_attacks.javascript import ROUND2 as JS2
from tests.verify.lang_attacks.javascript import ROUND3 as JS3
from tests.verify.lang_attacks.rust import CASES as RUST
from tests.verify.lang_attacks.rust import ROUND2 as RUST2
from tests.verify.lang_attacks.rust import ROUND3 as RUST3

pytestmark = pytest.mark.docker
CASES = [*GO, *JS, *JAVA, *RUST, *GO2, *JS2, *JAVA2, *RUST2, *RUST3, *JS3]
HOLES: dict[str, str] = {
    # wrong fixes that hard-code the inputs of tests the patch's author read: no test tells them from a fix
    # (Python's corpus counts its hard-codes the same way); an agent never sees a FAIL_TO_PASS test's inputs
    **dict.fromkeys(["go-hard-code-visible-input", "js-hard-code-visible-input", "java-hard-code-visible-input",
                     "rust-hard-code-visible-input"], "a hard-code of hidden inputs: resolved and kept"),
    # the task's one FAIL_TO_PASS test compares a struct the crate's PartialEq decides: no site
    "rust-partialeq-always-true": "no copy of the test (its literal is inside an enum): resolved and kept",
    # the value the hidden test expects is in the issue ('c=3&b=2&a=1'): written into the blind checks'
    # file after the run, it is a hard-code of that value by another road (the file is the tests' user's)
    "js-blind-seen-file-rewritten": "the issue's answer written as every check's value: resolved and kept",
}
"""Case id -> what the verifier at the red team's commit made of it, for the cases that get through."""
BY_CHANCE: dict[str, str] = dict.fromkeys(
    ["java-reads-expected-at-run-time"],
    # the code reads the test files at run time and answers with the first test that names its
    # input; each copy lands before or after its original by a draw, so with 3 copies the
    # original comes first in 1 plan of 8, and then only the copies fail, as under a real fix.
    # Seen in a fresh-clone CI (rust, session 12). Go's and Rust's tests are unreadable at run time
    # (frameworks/go_exec.py, rust_exec.py), and JS's expected values are on the host (blind checks,
    # frameworks/jsblind.py), so their cases are blocked in every plan.
    "caught in about 7 plans of 8: the original is first in its file in 1 of 8 and the forger is believed")
"""Case id -> why the verdict depends on the plan's draw: blocked in most runs, resolved in some."""


def _param(case: Case):
    marks = [pytest.mark.xfail(strict=True, reason=HOLES[case.id])] if case.id in HOLES else []
    marks += [pytest.mark.xfail(strict=False, reason=BY_CHANCE[case.id])] if case.id in BY_CHANCE else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
async def test_lang_attack(case: Case, tmp_path):
    folder = case.folder
    task = load_taskset(str(folder), skip_invalid=False).tasks[case.task]
    ensure_images([task], folder)
    patch = patch_of(case, task, tmp_path)
    verdict = await DockerVerifier(VerifierConfig(timeout=300)).verify(task, patch)
    kept = attempt(patch=patch).model_copy(update={"verdict": verdict})
    taught = ResolvedFilter().run([kept]).kept == [kept]
    flags = ",".join(sorted({f.kind.value for f in verdict.flags}))
    print(f"RESULT\t{case.id}\t{case.expect.value}\t{verdict.resolved}\t{verdict.reason}\t{taught}\t{flags}\t{verdict.detail[:200]}")
    if case.expect is Expect.resolves:
        assert verdict.resolved and taught, verdict
    else:
        assert not taught, verdict
