"""The red team of the `command` framework in Go and JavaScript (mocha, `node --test`, jest)
(issue 32): each case an agent patch made at a demo task's start state
(`tests/verify/lang_attacks/`), verified for real in the task's image and judged as
`lang_attacks/verdicts.py` says. Java and Rust: test_lang_attacks_java_rust.py; the held-back
rounds: test_lang_heldout_*.py. One file per group, so the suite's workers share them out.
"""

from __future__ import annotations

import pytest

from tests.verify.lang_attacks import Case
from tests.verify.lang_attacks.golang import CASES as GO
from tests.verify.lang_attacks.golang import ROUND2 as GO2
from tests.verify.lang_attacks.javascript import CASES as JS
from tests.verify.lang_attacks.javascript import ROUND2 as JS2
from tests.verify.lang_attacks.javascript import ROUND3 as JS3
from tests.verify.lang_attacks.jest import CASES as JEST
from tests.verify.lang_attacks.verdicts import judge, params

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("case", params([*GO, *JS, *GO2, *JS2, *JS3, *JEST]))
async def test_lang_attack(case: Case, tmp_path):
    await judge(case, tmp_path)
