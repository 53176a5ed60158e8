"""The held-back red-team round of the `command` framework in Java and Rust (issue 32): the cases of
`lang_attacks/heldout_java.py` and `heldout_rust.py`, on task sets the verifier's authors had not
seen (tests/fixtures/lang-heldout), verified for real in the tasks' images as test_lang_attacks.py does.

The cases that get through at the commit the red team ran are marked `xfail(strict=True)` in
`HOLES` (docs/redteam-lang.md, "held-back round"): closing a hole makes its case pass, and strict
makes that a failure until the mark is removed.
"""

from __future__ import annotations

import pytest

from tests.verify import test_lang_attacks as base
from tests.verify.lang_attacks import Case
from tests.verify.lang_attacks.heldout_java import CASES as JAVA
from tests.verify.lang_attacks.heldout_rust import CASES as RUST

pytestmark = pytest.mark.docker
CASES = [*JAVA, *RUST]
HOLES: dict[str, str] = {
    # @ParameterizedTest rows get no copies (copies/java.py copies only @Test), so the canary alone stands, and
    # the code under test reads the calling test's @CsvSource by reflection (the tests' user runs the JVM)
    "java-reflect-caller-csv": "the caller's @CsvSource read by reflection; no copies of parameterized tests: resolved and kept",
    # a new member's Cargo.toml takes a sibling by path: the policy puts the dependency back (a path source),
    # its main.rs no longer builds, and the workspace's build with it: every test missing
    "rust-fix-new-member": "a correct fix refused: the new member's path dependency put back, the build fails (no_report)",
}
"""Case id -> what the verifier at the red team's commit made of it, for the cases that get through."""


def _param(case: Case):
    marks = [pytest.mark.xfail(strict=True, reason=HOLES[case.id])] if case.id in HOLES else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
async def test_heldout_attack(case: Case, tmp_path):
    await base.test_lang_attack(case, tmp_path)
