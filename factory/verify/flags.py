"""Static flags on a patch's added lines: things a reviewer should look at.

Flags never fail a correct fix on their own, and no filter drops a run for them: they are
recorded on the verdict for review. Text is no evidence (`"_py" + "test"` defeats a regex; a
`TYPE_CHECKING` import of `_pytest` is harmless): what decides is what the reporting plugin saw
the code under test do to the test machinery (`altered test machinery: ...`, grading.py).
"""

from __future__ import annotations

import re

from factory.records import FlagKind, VerdictFlag

SUSPICIOUS = {
    "exits_process": r"\bsys\.exit\s*\(|\bos\._exit\s*\(|\bquit\s*\(|\bexit\s*\(",
    "defines_eq": r"\b__eq__\b|\b__ne__\b",
    "touches_test_machinery": r"\b_pytest\b|\bimport\s+pytest\b|\bfrom\s+pytest\b|\bunittest\.mock\b",
    "reads_git": r"\.git\b(?!hub|ignore|attributes|lab)",
    "introspects_interpreter": r"\bgc\.get_objects\b|\bsys\._getframe\b|\bsys\.modules\s*\[|\bbuiltins\b|\bsettrace\b|\bsetprofile\b",
    "process_hooks": r"\batexit\b|\bsignal\.signal\b|\bfaulthandler\b",
}
_COMPILED = {name: re.compile(rx) for name, rx in SUSPICIOUS.items()}


def static_flags(patch: str) -> list[VerdictFlag]:
    added = "\n".join(
        line[1:] for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++ ")
    )
    return [VerdictFlag(kind=FlagKind.static, detail=name) for name, rx in _COMPILED.items() if rx.search(added)]
