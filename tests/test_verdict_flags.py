"""Verdict flags are typed (a kind and a detail); verdicts saved before that still read."""

from __future__ import annotations

import pytest

from factory.records import FlagKind, Verdict, VerdictFlag


@pytest.mark.parametrize(("text", "kind", "detail"), [
    ("refused: a symlink: a/b", FlagKind.refused, "a symlink: a/b"),
    ("dropped test configuration: conftest.py", FlagKind.dropped_test_configuration, "conftest.py"),
    # the longer kind wins over the kind it starts with
    ("dropped test configuration in packaging file: setup.cfg: [tool:pytest]",
     FlagKind.dropped_packaging_configuration, "setup.cfg: [tool:pytest]"),
    ("static: defines_eq", FlagKind.static, "defines_eq"),
    ("weak controls: no hidden tests", FlagKind.weak_controls, "no hidden tests"),
    ("altered test machinery: _pytest.runner.call_and_report", FlagKind.altered_machinery,
     "_pytest.runner.call_and_report"),
    ("reused verdict of an identical patch", FlagKind.reused, ""),
    ("something a newer factory wrote", FlagKind.other, "something a newer factory wrote"),
])
def test_a_saved_verdicts_string_flags_read_as_kinds_and_print_as_they_were(text, kind, detail):
    verdict = Verdict.model_validate_json(f'{{"resolved": true, "flags": ["{text}"]}}')
    assert verdict.flags == [VerdictFlag(kind=kind, detail=detail)]
    assert str(verdict.flags[0]) == text


def test_typed_flags_survive_a_round_trip_and_are_found_by_kind():
    verdict = Verdict(resolved=True, flags=[VerdictFlag(kind=FlagKind.static, detail="exits_process"),
                                            VerdictFlag(kind=FlagKind.weak_controls, detail="few copies")])
    again = Verdict.model_validate_json(verdict.model_dump_json())
    assert again == verdict
    assert again.flagged(FlagKind.weak_controls) == [verdict.flags[1]]
    assert again.flagged(FlagKind.altered_machinery) == []
