"""go.mod read as the go command reads it: directives, single or in a `verb ( ... )` block.

No Python library parses go.mod; its grammar is small (lines of tokens, `//` comments, quoted
strings, one level of blocks), and this reads it to the tokens. `put_back` keeps the agent's
file and puts the start state's directives of some verbs in place of the agent's, checked by
reading the result again.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Directive:
    verb: str
    args: tuple[str, ...]
    lines: tuple[int, int]
    """The lines it spans, [first, last) — a block's: the whole block."""


def tokens(line: str) -> list[str]:
    """A line's tokens, comments left out; quoted strings are one token, quotes kept."""
    out, i = [], 0
    while i < len(line):
        ch = line[i]
        if ch.isspace():
            i += 1
        elif line.startswith("//", i):
            break
        elif ch in "\"`":
            end = i + 1
            while end < len(line) and line[end] != ch:
                end += 2 if ch == '"' and line[end] == "\\" else 1
            out.append(line[i:end + 1])
            i = end + 1
        else:
            end = i
            while end < len(line) and not line[end].isspace() and not line.startswith("//", end) and line[end] not in "\"`":
                end += 1
            out.append(line[i:end])
            i = end
    return out


def directives(text: str) -> list[Directive]:
    """Every directive of the file, a block's entries each with the block's lines."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        words = tokens(lines[i])
        if len(words) == 2 and words[1] == "(":
            end = i + 1
            while end < len(lines) and tokens(lines[end]) != [")"]:
                end += 1
            out += [Directive(words[0], tuple(tokens(lines[j])), (i, end + 1)) for j in range(i + 1, end)
                    if tokens(lines[j])]
            i = end + 1
            continue
        if words:
            out.append(Directive(words[0], tuple(words[1:]), (i, i + 1)))
        i += 1
    return out


def judged(text: str, verbs: frozenset[str]) -> list[tuple[str, tuple[str, ...]]]:
    return sorted((d.verb, d.args) for d in directives(text) if d.verb in verbs)


def put_back(agent: str, start: str, verbs: frozenset[str]) -> str | None:
    """The agent's go.mod with the directives of `verbs` as they are at the start state; None
    when the result would not read as exactly that (the caller puts the whole file back)."""
    lines = agent.split("\n")
    drop = {n for d in directives(agent) if d.verb in verbs for n in range(*d.lines)}
    kept = [line for n, line in enumerate(lines) if n not in drop]
    start_lines = start.split("\n")
    spans = sorted({d.lines for d in directives(start) if d.verb in verbs})
    added = [line for first, last in spans for line in start_lines[first:last]]
    while kept and not kept[-1].strip():
        kept.pop()
    merged = "\n".join([*kept, *([""] + added if added else []), ""])
    others = [(d.verb, d.args) for d in directives(agent) if d.verb not in verbs]
    if judged(merged, verbs) != judged(start, verbs) or [(d.verb, d.args) for d in directives(merged)
                                                          if d.verb not in verbs] != others:
        return None
    return merged
