"""The held-back red-team round in Go and JavaScript (issue 32): `lang_attacks/heldout_gojs.py`, on
task sets the verifier's authors had not seen (tests/fixtures/lang-heldout), judged as
test_lang_attacks.py judges the demo rounds."""

from __future__ import annotations

import pytest

from tests.verify.lang_attacks import Case
from tests.verify.lang_attacks.heldout_gojs import GO, JS, START
from tests.verify.lang_attacks.verdicts import judge, params

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("case", params([*GO, *JS, *START]))
async def test_heldout_case(case: Case, tmp_path):
    await judge(case, tmp_path)
