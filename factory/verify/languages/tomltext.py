"""Put some keys of a TOML file back at their start state and keep the agent's text for the rest.

tomllib reads TOML but writes none, and a manifest is the agent's text (comments, order, a new
dependency): so the agent's file is cut where TOML's own syntax cuts it (a `[table]` or
`[[array]]` header line starts a block; a `key = value` line in a block sets one key), the
blocks and lines of the judged keys replaced by the start state's, and the result read back with
tomllib: it must hold the start state's values at every judged key and the agent's everywhere
else, or `put_back` gives None and the caller puts the whole file back.
"""

from __future__ import annotations

import copy
import re
import tomllib
from dataclasses import dataclass, field

HEADER = re.compile(r"^\s*\[\[?(.+?)\]\]?\s*(?:#.*)?$")
ASSIGNMENT = re.compile(r"^\s*([^=#\[\s][^=#]*?)\s*=")
MISSING = object()
Key = tuple[str, ...]


@dataclass
class Block:
    table: Key
    """The header's key, () for the lines before the first header."""
    lines: list[str] = field(default_factory=list)


def get(doc: object, key: Key) -> object:
    for part in key:
        if not isinstance(doc, dict) or part not in doc:
            return MISSING
        doc = doc[part]
    return doc


def put_back(agent: str, start: str, keys: list[Key]) -> str | None:
    """The agent's TOML text with each of `keys` (a table, or a key of one) as it is in `start`."""
    ours, theirs = _blocks(agent), _blocks(start)
    for key in keys:
        ours = [b for b in ours if not _within(b.table, key)]
        for block in ours:
            if block.table == key[:-1]:
                block.lines = [line for line in block.lines if _assigned(line) != key[-1]]
        for block in theirs:
            if _within(block.table, key):
                ours.append(Block(block.table, list(block.lines)))
            elif block.table == key[:-1] and any(_assigned(line) == key[-1] for line in block.lines):
                lines = [line for line in block.lines if _assigned(line) == key[-1]]
                home = next((b for b in ours if b.table == key[:-1]), None)
                if home is None:
                    ours.append(Block(block.table, [block.lines[0], *lines]))
                else:
                    home.lines[1:1] = lines
    text = "".join(line if line.endswith("\n") else line + "\n" for block in ours for line in block.lines)
    try:
        merged, want, mine = tomllib.loads(text), tomllib.loads(start), tomllib.loads(agent)
    except tomllib.TOMLDecodeError:
        return None
    if any(get(merged, key) != get(want, key) for key in keys) or _without(merged, keys) != _without(mine, keys):
        return None
    return text


def _blocks(text: str) -> list[Block]:
    blocks = [Block(())]
    for line in text.splitlines(keepends=True):
        table = _header(line)
        if table is not None:
            blocks.append(Block(table))
        blocks[-1].lines.append(line)
    return blocks


def _header(line: str) -> Key | None:
    match = HEADER.match(line)
    if not match:
        return None
    try:  # the header's key, read by the TOML parser itself (quoted parts, dots, spaces)
        doc = tomllib.loads(f"[{match[1]}]")
    except tomllib.TOMLDecodeError:
        return None
    key: list[str] = []
    while isinstance(doc, dict) and len(doc) == 1:
        name, doc = next(iter(doc.items()))
        key.append(name)
    return tuple(key)


def _assigned(line: str) -> str | None:
    """The first part of the key a `key = value` line sets."""
    match = ASSIGNMENT.match(line)
    if not match:
        return None
    try:
        doc = tomllib.loads(f"{match[1]} = 0")
    except tomllib.TOMLDecodeError:
        return None
    return next(iter(doc))


def _within(table: Key, key: Key) -> bool:
    return len(table) >= len(key) and table[:len(key)] == key


def _without(doc: dict, keys: list[Key]) -> dict:
    """`doc` without `keys`, and without the tables that emptied (an empty table says nothing)."""
    doc = copy.deepcopy(doc)
    for key in keys:
        for depth in range(len(key), 0, -1):
            parent = get(doc, key[:depth - 1])
            if isinstance(parent, dict) and (depth == len(key) or parent.get(key[depth - 1]) == {}):
                parent.pop(key[depth - 1], None)
    return doc
