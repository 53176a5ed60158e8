"""Which classes a repo's classes derive from, read from their `class` lines (never run).

A copy of a raise-only test expects another error class than its original. To look like a
real test it expects one the test file itself names (a builtin no library raises stands out
to a reader); to stay sound that class must be unrelated to the original's: neither derives
from the other and no class of the repo derives from both, so whatever a correct fix raises
where the original expects its class, the copy does not expect. The lines are read from the
repo as the tests will see it (the agent's patch applied: a class the fix adds counts).

Only a tree known whole can say that no class derives from both. Headers are read whole
however many lines they span, and a base imported under another name (`from .errors import
InvalidRange as IR`) is read as what it names. A base the repo does not define (a third-party
class, `Mapping[...]`) is a root outside the repo: it cannot derive from the repo's own classes,
so two classes of the repo stay unrelated across it; but it may derive from any builtin, so a
builtin counts as unrelated only where every ancestry is known. A header that cannot be read
(a base that is a call) leaves no two classes unrelated, and copies fall back to a builtin no
library raises.
"""

from __future__ import annotations

import builtins
import functools
import re
import shlex
from dataclasses import dataclass, field

LISTING = "/tmp/factory-classes"
LIMIT = 400_000
_AWK = r"""
/^[[:space:]]*class[[:space:]]+[A-Za-z_][A-Za-z0-9_]*[[:space:]]*[(:]/ {
  h = $0; sub(/#.*/, "", h); n = 0
  while (gsub(/\(/, "(", h) > gsub(/\)/, ")", h) && n < 30 && (getline more) > 0) { sub(/#.*/, "", more); h = h " " more; n++ }
  print h; next
}
/^[[:space:]]*from[[:space:]].*[[:space:]]import[[:space:]].*[[:space:]]as[[:space:]]/ { print }
"""
COMMAND = (f"find . -name .git -prune -o -name '*.py' -type f -exec awk {shlex.quote(_AWK)} {{}} + "
           f"2>/dev/null | head -c {LIMIT} > {LISTING}")
"""Shell, run in the repo, that writes every class header (joined onto one line) and every
`from ... import A as B` line to LISTING."""
_HEADER = re.compile(r"^\s*class\s+(\w+)\s*(?:\(([^)]*)\))?\s*:", re.M)
_ALIAS = re.compile(r"\b(\w+)\s+as\s+(\w+)")


@dataclass
class Classes:
    bases: dict[str, set[str]] = field(default_factory=dict)
    """Class name -> the names of its bases, over every class of that name in the repo."""
    whole: bool = True
    """Every header was read whole (none spans lines)."""
    _trees: dict[str, set[str] | None] = field(default_factory=dict, repr=False, compare=False)
    """Each class's lineage once worked out (the tree does not change once read)."""

    @classmethod
    def parse(cls, listing: str) -> Classes:
        imports = [line for line in listing.splitlines() if line.lstrip().startswith("from")]
        lines = [line for line in listing.splitlines() if line.strip() and not line.lstrip().startswith("from")]
        found = cls(whole=len(listing) < LIMIT and len(_HEADER.findall(listing)) == len(lines))
        aliases = {alias: name for line in imports for name, alias in _ALIAS.findall(line.partition(" import ")[2])
                   if alias != name}
        for name, bases in _HEADER.findall(listing):
            parts = [b.split("[")[0].strip().rpartition(".")[2] for b in bases.split(",") if "=" not in b]
            found.bases.setdefault(name, set()).update(aliases.get(p, p) for p in parts if p)
        return found

    def ancestors(self, name: str) -> set[str] | None:
        """`name` and every class it derives from; None where some of that is not known (a base the
        headers do not define, or a cycle)."""
        found = self.lineage(name)
        return None if found is None or self._outside(found) else found

    def lineage(self, name: str, _seen: frozenset[str] = frozenset()) -> set[str] | None:
        """`name` and every class it derives from, a base the repo does not define standing for
        itself (a root outside the repo); None for a cycle (whatever path leads there, so kept
        once found)."""
        if name in self._trees:
            return self._trees[name]
        if name in _seen:
            return None
        builtin = getattr(builtins, name, None)
        if name not in self.bases:
            return {c.__name__ for c in builtin.__mro__} if isinstance(builtin, type) else {name}
        found: set[str] | None = {name}
        for base in self.bases[name] or {"object"}:
            above = self.lineage(base, _seen | {name})
            if above is None:
                found = None
                break
            found |= above
        self._trees[name] = found
        return found

    def error(self, name: str) -> bool:
        return "BaseException" in (self.lineage(name) or ())

    @functools.cached_property
    def _every_tree(self) -> list[set[str]] | None:
        """The ancestry of every class of the repo; None when any is not known."""
        trees = [self.ancestors(c) for c in self.bases]
        return None if not self.whole or None in trees else trees

    def unrelated(self, a: str, b: str) -> bool:
        """Nothing raised as an `a` can be a `b`: neither derives from the other, no class from both,
        as far as a tree known whole shows (else False). `a` must be the repo's own: a builtin `a`
        may be raised as a library's class of both (numpy's AxisError is a ValueError and an
        IndexError), which no tree of the repo shows."""
        if not self.whole or a not in self.bases:
            return False
        if b in self.bases:  # two of the repo's own: no root outside the repo derives from either
            trees = self._every_lineage
            above_a, above_b = self.lineage(a), self.lineage(b)
        else:
            trees = self._every_tree
            above_a, above_b = self.ancestors(a), self.ancestors(b)
        if trees is None or above_a is None or above_b is None or a in above_b or b in above_a:
            return False
        # a class with a root outside the repo and one of the two above it may be of both: its
        # outside base may be the other under a name assigned in the repo (`_Base = InvalidRange`)
        return not any({a, b} <= tree or b in self.bases and tree & {a, b} and self._outside(tree) for tree in trees)

    def _outside(self, lineage: set[str]) -> bool:
        return any(n not in self.bases and not isinstance(getattr(builtins, n, None), type) for n in lineage)

    @functools.cached_property
    def _every_lineage(self) -> list[set[str]] | None:
        trees = [self.lineage(c) for c in self.bases]
        return None if None in trees else trees
