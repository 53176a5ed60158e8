"""The red team of the `command` framework in Java and Rust (issue 32), on the demo task sets: as
test_lang_attacks.py does for Go and JavaScript."""

from __future__ import annotations

import pytest

from tests.verify.lang_attacks import Case
from tests.verify.lang_attacks.java import CASES as JAVA
from tests.verify.lang_attacks.java import ROUND2 as JAVA2
from tests.verify.lang_attacks.rust import CASES as RUST
from tests.verify.lang_attacks.rust import ROUND2 as RUST2
from tests.verify.lang_attacks.rust import ROUND3 as RUST3
from tests.verify.lang_attacks.verdicts import judge, params

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("case", params([*JAVA, *RUST, *JAVA2, *RUST2, *RUST3]))
async def test_lang_attack(case: Case, tmp_path):
    await judge(case, tmp_path)
