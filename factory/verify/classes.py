"""Which classes a repo's classes derive from, read from their `class` lines (never run).

A copy of a raise-only test expects another error class than its original. To look like a
real test it expects one the test file itself names (a builtin no library raises stands out
to a reader); to stay sound that class must be unrelated to the original's: neither derives
from the other and no class of the repo derives from both, so whatever a correct fix raises
where the original expects its class, the copy does not expect. The lines are read from the
repo as the tests will see it (the agent's patch applied: a class the fix adds counts); where
part of an ancestry is not in the repo (a third-party base), the class is not used.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass, field

LISTING = "/tmp/factory-classes"
COMMAND = (r"grep -rhE --include='*.py' '^[[:space:]]*class[[:space:]]+[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(' . "
           f"2>/dev/null | head -c 400000 > {LISTING}")
"""Shell, run in the repo, that writes every one-line `class Name(bases):` header to LISTING."""
_HEADER = re.compile(r"^\s*class\s+(\w+)\s*\(([^)]*)\)", re.M)


@dataclass
class Classes:
    bases: dict[str, set[str]] = field(default_factory=dict)
    """Class name -> the names of its bases, over every class of that name in the repo."""

    @classmethod
    def parse(cls, listing: str) -> Classes:
        found = cls()
        for name, bases in _HEADER.findall(listing):
            parts = [b.split("[")[0].strip().rpartition(".")[2] for b in bases.split(",") if "=" not in b]
            found.bases.setdefault(name, set()).update(p for p in parts if p)
        return found

    def ancestors(self, name: str, _seen: frozenset[str] = frozenset()) -> set[str] | None:
        """`name` and every class it derives from; None where some of that is not known."""
        builtin = getattr(builtins, name, None)
        if isinstance(builtin, type) and name not in self.bases:
            return {c.__name__ for c in builtin.__mro__}
        if name not in self.bases or name in _seen:
            return None
        found = {name}
        for base in self.bases[name] or {"object"}:
            above = self.ancestors(base, _seen | {name})
            if above is None:
                return None
            found |= above
        return found

    def error(self, name: str) -> bool:
        return "BaseException" in (self.ancestors(name) or ())

    def unrelated(self, a: str, b: str) -> bool:
        """Nothing raised as an `a` can be a `b`: neither derives from the other, no class from both."""
        above_a, above_b = self.ancestors(a), self.ancestors(b)
        if above_a is None or above_b is None or a in above_b or b in above_a:
            return False
        return not any({a, b} <= (self.ancestors(c) or set()) for c in self.bases)
