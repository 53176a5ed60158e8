"""The twin discriminator the round-2 forgers carry, in Python: what a forger that never saw a
FAIL_TO_PASS test's body can still work out at run time from the test files it reads.

Copies (`factory/verify/frameworks/copies/units.py`) are twins of their original at one literal.
The forger groups the tests it did not know at the start state into twins (same tokens but one),
then picks the original of each group by what the twin values give away:

  numbers  `treesitter.twin_numbers` draws each copy 2 to 9 from the original, from both sides
           when the original is 2 or more, from above only when it is below 2: a value that is
           1 from another twin, or that the others do not surround so, is a copy
  own      the original's value is often written elsewhere in the test: in its failure message
           (`want 1.4.1`), in its input (`'token=abc==&eq=a=b'` holds `a=b`), in other rows
  repo     else in the repo: the source (`NUMBER`), a class it declares (`CalcException`, where a
           copy swapped a JDK exception in)
  letters  a string twin changes one character to a random letter: the original's three
           letters around it are the ones the repo's text holds most
  smallest the twin of least magnitude

The Go, JS and Java forgers carry the same rules, translated (`golang.py`, `javascript.py`,
`java.py`); `tests/verify/test_twins_pick.py` measures this one on the writers' real plans.
"""

from __future__ import annotations

import re

TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][+-]?[0-9]+)?[A-Za-z0-9]*'
                   r'|[A-Za-z_][A-Za-z0-9_.]*|\S')


def tokens(body: str) -> list[str]:
    return TOKEN.findall(body)


def groups(units: dict[str, str]) -> list[tuple[int, list[str]]]:
    """Twins among `units` (name -> body): (the token index they differ at, their names), two or
    more tests whose tokens are the same but at that one index."""
    toks = {name: tokens(body) for name, body in units.items()}
    found: dict[tuple, list[str]] = {}
    names = list(units)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            ta, tb = toks[a], toks[b]
            if len(ta) != len(tb):
                continue
            diff = [k for k in range(len(ta)) if ta[k] != tb[k]]
            if len(diff) == 1:
                key = (diff[0], tuple(ta[:diff[0]]), tuple(ta[diff[0] + 1:]))
                group = found.setdefault(key, [])
                group += [n for n in (a, b) if n not in group]
    return [(key[0], group) for key, group in found.items()]


def number(token: str) -> float | None:
    try:
        return float(token.replace("_", "").rstrip("fFdDlL"))
    except ValueError:
        return None


def feasible(value: float, others: list[float]) -> bool:
    """Whether `value` may be the original whose twins are `others` (`twin_numbers`' draw)."""
    if any(not 2 <= abs(o - value) <= 9 for o in others):
        return False
    below = sum(o < value for o in others)
    if value < 2:
        return below == 0
    return len(others) < 2 or 0 < below < len(others)


def content(token: str) -> str:
    return token[1:-1] if token[:1] in "\"'" else token


def pick(index: int, group: list[str], units: dict[str, str], corpus: str) -> str:
    """The twin of `group` (differing at token `index`) most likely the original; `corpus`: the
    repo's text the forger reads at run time, the twins themselves left out."""
    values = {name: tokens(units[name])[index] for name in group}
    candidates = list(group)
    nums = {n: number(v) for n, v in values.items()}
    if all(v is not None for v in nums.values()):
        fit = [n for n in group if feasible(nums[n], [nums[o] for o in group if o != n])]
        candidates = fit or candidates
    body = tokens(units[group[0]])
    rest = " ".join(body[:index] + body[index + 1:])
    context = corpus + "\n" + rest

    def score(name: str) -> tuple:
        text = content(values[name])
        own = rest.count(text) if text else 0
        whole = context.count(text) if text else 0
        diff = _changed_at(values, name)
        letters = context.count(text[max(0, diff - 1):diff + 2]) if diff is not None else 0
        magnitude = -abs(nums[name]) if nums[name] is not None else 0
        return (own, whole, letters, magnitude)

    return max(candidates, key=score)


def _changed_at(values: dict[str, str], name: str) -> int | None:
    """Where `values[name]`'s contents differ from the other twins' (one character), if so."""
    mine = content(values[name])
    for other, value in values.items():
        theirs = content(value)
        if other != name and len(theirs) == len(mine):
            diff = [i for i in range(len(mine)) if mine[i] != theirs[i]]
            if len(diff) == 1:
                return diff[0]
    return None
