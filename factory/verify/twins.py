"""Where a copy of a test goes and what it is called.

Next to its original, before or after it at random, with the same comments above it, the same
decorators and the same blank lines around it, in the file's own line endings; under another
plausible name: one word of the original's name added (from the file's other test names),
swapped or dropped, so that no rule (longer, later, odd-sounding) picks out the copies. An
original the agent could see is renamed the same way, so its old name points at nothing.
"""

from __future__ import annotations

import ast
import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from factory.verify.mutants import Edit, Source

_GLUE = {"a", "an", "and", "are", "as", "at", "by", "for", "from", "in", "is", "its", "of", "on", "or", "the", "to", "with"}
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


@dataclass
class Copy:
    fn: ast.FunctionDef | ast.AsyncFunctionDef
    scope: ast.Module | ast.ClassDef
    edits: list[Edit]
    """What differs from the original, in the file's byte offsets."""


def write_copies(src: Source, copies: list[Copy], rng: random.Random,
                 rename: list[ast.FunctionDef | ast.AsyncFunctionDef] = ()) -> tuple[str, list[str], list[str]]:
    """The file with every copy in it, the name each copy got, and the name each function of
    `rename` (originals) now has: a test renamed in place runs unchanged under a name the agent
    never saw, so a forger that knows the old name finds neither the test nor its copies by it."""
    data = src.data if src.data.endswith(b"\n") else src.data + b"\n"
    lines = data.splitlines(keepends=True)
    tests = [n.name for n in ast.walk(src.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.name.startswith("test")]
    uses = Counter(w for name in tests for w in set(_words(name)))
    vocabulary = sorted(w for w in uses if len(w) > 1 and not w.isdigit())
    taken = _scope_names(src.tree)
    edits: list[Edit] = []  # on `data`; an insertion is an empty range
    names: list[str] = []

    def fresh(fn: ast.FunctionDef | ast.AsyncFunctionDef, scope: ast.Module | ast.ClassDef) -> str:
        own = _words(fn.name)
        shared = {w for w in own if uses[w] > 1}
        name = _new_name(fn.name, [w for w in vocabulary if w not in own], shared,
                         taken | _scope_names(scope) | set(names), rng)
        names.append(name)
        return name

    def def_name(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> re.Match:
        return re.compile(rb"\bdef\s+(" + re.escape(fn.name.encode()) + rb")\b").search(data, src.at(fn.lineno))

    copy_names = []
    for c in copies:
        name = fresh(c.fn, c.scope)
        first, last, blank = _segment(src, c.fn)
        start, end = src.at(first + 1), src.at(last + 1) if last < len(lines) else len(data)
        named = def_name(c.fn)
        text = data[start:end]
        for e in sorted([*c.edits, Edit(named.start(1), named.end(1), name)], key=lambda e: e.start, reverse=True):
            text = text[:e.start - start] + e.text.encode() + text[e.end - start:]
        newline = b"\r\n" if lines[first].endswith(b"\r\n") else b"\n"
        where = start if rng.random() < 0.5 else end
        edits.append(Edit(where, where, (text + newline * blank if where == start else newline * blank + text).decode()))
        copy_names.append(name)
    new_names = []
    for fn in rename:
        scope = next(c.scope for c in copies if c.fn is fn)
        at = def_name(fn)
        new_names.append(fresh(fn, scope))
        edits.append(Edit(at.start(1), at.end(1), new_names[-1]))
    out, at = [], 0
    for e in sorted(edits, key=lambda e: e.start):
        out += [data[at:e.start], e.text.encode()]
        at = e.end
    out.append(data[at:])
    return b"".join(out).decode(), copy_names, new_names


def defs(tree: ast.Module, scope: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], ast.FunctionDef]]:
    """Every function at module level or in a (nested) class, with the names of its classes."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            yield from defs(node, (*scope, node.name))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield scope, node


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name.removeprefix("test"))]


def _new_name(original: str, vocabulary: list[str], shared: set[str], taken: set[str], rng: random.Random) -> str:
    """Another plausible test name: a word of the file's other test names added, or one of the
    original's words that other test names also have (`shared`) swapped or dropped. A word found
    in no other test name stays: the twin without it would be the copy."""
    snake = "_" in original
    words = _words(original)
    for _ in range(60):
        w = list(words)
        how = rng.choice(("insert", "replace", "drop"))
        spots = [i for i, word in enumerate(w) if word in shared]
        if how == "drop" and len(w) >= 2 and spots:
            del w[rng.choice(spots)]
        elif how == "replace" and spots and vocabulary:
            w[rng.choice(spots)] = rng.choice(vocabulary)
        elif vocabulary:
            w.insert(rng.randrange(len(w) + 1), rng.choice(vocabulary))
        name = "test_" + "_".join(w) if snake else "test" + "".join(x.capitalize() for x in w)
        if w and w[0] not in _GLUE and w[-1] not in _GLUE and name not in taken and name != original:
            return name
    return f"{original}_{rng.randint(2, 99)}"


def _scope_names(scope: ast.Module | ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for node in scope.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _segment(src: Source, fn: ast.AST) -> tuple[int, int, int]:
    """(first line, line after the last, blank lines above) of a function with its decorators and comments."""
    lines = src.data.splitlines()
    first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)]) - 1
    indent = len(lines[first]) - len(lines[first].lstrip())
    while first > 0 and lines[first - 1].strip().startswith(b"#") and lines[first - 1][:indent].strip() == b"":
        first -= 1
    last = fn.end_lineno
    while last < len(lines) and lines[last].strip().startswith(b"#") and len(lines[last]) - len(lines[last].lstrip()) > indent:
        last += 1
    blank = 0
    while first - blank > 0 and not lines[first - blank - 1].strip():
        blank += 1
    if first == 0:  # at the top of the file: as far apart as from what follows
        while last + blank < len(lines) and not lines[last + blank].strip():
            blank += 1
    return first, last, min(blank, 3)
