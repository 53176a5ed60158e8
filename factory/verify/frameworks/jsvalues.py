"""JavaScript's primitive values on the host: a literal of a test file read as node reads it, a
value the blind-check sender wrote (`jsblind_sender.js`) read back, and the comparisons the
assertions they replace make (`Object.is`, `===`, `==`, node's `assert.equal` and legacy
`deepEqual`).

Every comparison here is JavaScript's on primitives, written out from the language's rules (the
abstract equality algorithm, `StringToNumber`, `StringToBigInt`); `tests/verify/test_jsblind.py`
holds them to real node on a few thousand pairs. An object the sender met is known only by its
kind (a loose check also carries what its own conversion gave, as `==` would have called it).
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass
from fractions import Fraction

import tree_sitter

from factory.verify.frameworks.copies.treesitter import source

PRIMITIVES = ("number", "bigint", "string", "boolean", "null", "undefined")
OBJECTS = ("object", "function", "symbol")
"""Kinds the sender names without a value: nothing of them is read without running their code."""


@dataclass(frozen=True)
class JsValue:
    kind: str
    """`PRIMITIVES` or `OBJECTS`."""
    value: float | int | str | bool | dict | list | Tree | None = None
    """A primitive's value; an expected object's members (`structure`); what the sender read of an
    actual object (`Tree`)."""
    converted: JsValue | None = None
    """For an object met by a loose check: the primitive its own conversion gave (`ToPrimitive`)."""


UNDEFINED, NULL = JsValue("undefined"), JsValue("null")

# -- literals, as node reads a test file ------------------------------------------------------

_NUMBER = re.compile(r"(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:[0-9][0-9_]*\.?[0-9_]*|\.[0-9][0-9_]*)"
                     r"(?:[eE][+-]?[0-9_]+)?)(n?)")
_NAMED = {"true": JsValue("boolean", True), "false": JsValue("boolean", False), "null": NULL, "undefined": UNDEFINED,
          "NaN": JsValue("number", math.nan), "Infinity": JsValue("number", math.inf)}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}
_LINE_ENDS = ("\r\n", "\n", "\r", "\u2028", "\u2029")


def literal(node: tree_sitter.Node) -> JsValue | None:
    """The primitive a literal expression of a test evaluates to; None for anything else (or a
    literal whose reading differs between sloppy and strict code: a legacy octal)."""
    kind = node.type
    if kind in ("parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression"):
        return literal(node.named_children[0]) if node.named_children else None
    if kind == "unary_expression" and source(node.child_by_field_name("operator")) in ("-", "+"):
        operand = node.child_by_field_name("argument")
        value = literal(operand) if operand is not None and operand.type in ("number", "identifier") else None
        if value is None or value.kind != "number" and not (value.kind == "bigint" and source(node)[0] == "-"):
            return None  # `+5n` throws at run time; `-true` and the like are not written as expected values
        return JsValue(value.kind, -value.value) if source(node.child_by_field_name("operator")) == "-" else value
    text = source(node)
    if kind == "number":
        return number(text)
    if kind in ("string", "template_string"):
        return string(text)
    if kind in ("true", "false", "null", "undefined") or (kind == "identifier" and text in ("NaN", "Infinity", "undefined")):
        return _NAMED[text]
    return None


MAX_DEPTH, MAX_NODES = 8, 2000
"""The deepest and largest object or array literal a blind check takes (the sender reads values
as deep as `DEPTH` in `jsblind_sender.js`, 8, and its budget of nodes is far larger)."""


def structure(node: tree_sitter.Node, depth: int = 0, budget: list[int] | None = None) -> JsValue | None:
    """An object or array literal of primitives (nested), as node's deepStrictEqual compares it:
    an object is a dict of its keys, an array a list. None for anything whose value a reader
    could not be sure of: a spread, a hole, a computed, numeric, repeated or `__proto__` key, a
    method, a shorthand, a literal nested past `MAX_DEPTH` or larger than `MAX_NODES`."""
    budget = [MAX_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        return None
    if node.type in ("parenthesized_expression", "as_expression", "satisfies_expression") and node.named_children:
        return structure(node.named_children[0], depth, budget)
    if node.type == "array":
        items = [c for c in node.named_children if c.type != "comment"]
        values = [structure(c, depth + 1, budget) for c in items]
        holes = re.search(r"\[\s*,|,\s*,", source(node)) is not None
        return None if holes or None in values else JsValue("object", values)
    if node.type == "object":
        members: dict[str, JsValue] = {}
        for pair in (c for c in node.named_children if c.type != "comment"):
            key = pair.child_by_field_name("key") if pair.type == "pair" else None
            name = source(key) if key is not None and key.type == "property_identifier" else \
                (string(source(key)) or JsValue("number")).value if key is not None and key.type == "string" else None
            value = structure(pair.child_by_field_name("value"), depth + 1, budget) if isinstance(name, str) else None
            if value is None or name in members or name == "__proto__":
                return None
            members[name] = value
        return JsValue("object", members)
    return literal(node)


def number(text: str) -> JsValue | None:
    """A numeric literal (`1_000`, `0x1F`, `.5e-3`, `10n`) as node holds it."""
    match = _NUMBER.fullmatch(text)
    if match is None or (len(text) > 1 and text[0] == "0" and text[1].isdigit()):
        return None  # a legacy octal or a decimal with a leading zero: sloppy mode only
    digits = text.replace("_", "").removesuffix("n")
    if match[1]:
        return JsValue("bigint", int(digits, 0)) if re.fullmatch(r"0[xXbBoO]?[0-9a-fA-F]*|[1-9][0-9]*", digits) else None
    if digits[:2].lower() in ("0x", "0b", "0o"):
        return JsValue("number", _double(int(digits, 0)))
    return JsValue("number", float(digits))


def _double(n: int) -> float:
    try:
        return float(n)  # rounded to nearest, ties to even, as the language rounds a literal
    except OverflowError:
        return math.inf


def string(text: str) -> JsValue | None:
    """A quoted string or a template without substitutions, escapes read as node reads them
    (UTF-16: `\\ud83d\\ude00` is one character, a lone surrogate stays)."""
    quote, body = text[:1], text[1:-1]
    if len(text) < 2 or quote not in "'\"`" or text[-1] != quote or (quote == "`" and "${" in body.replace("\\$", "")):
        return None
    units: list[str] = []
    i = 0
    if quote == "`":  # a template's line ends are read as \n
        body = re.sub(r"\r\n?", "\n", body)
    while i < len(body):
        char = body[i]
        if char != "\\":
            units.append(char)
            i += 1
            continue
        escape = body[i + 1:i + 2]
        end = next((e for e in _LINE_ENDS if body.startswith(e, i + 1)), None)
        if end is not None:  # a line continuation: nothing
            i += 1 + len(end)
        elif escape in _ESCAPES:
            units.append(_ESCAPES[escape])
            i += 2
        elif escape == "0" and not body[i + 2:i + 3].isdigit():
            units.append("\0")
            i += 2
        elif escape.isdigit():
            return None  # a legacy octal escape (`\1`, `\8`): sloppy-mode strings only
        elif escape == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i + 2:i + 4]):
            units.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif escape == "u" and (m := re.match(r"u([0-9a-fA-F]{4}|\{[0-9a-fA-F]+\})", body[i + 1:])):
            point = int(m[1].strip("{}"), 16)
            if point > 0x10FFFF:
                return None
            units.append(chr(point))
            i += 1 + len(m[0])
        elif escape in ("x", "u", ""):
            return None  # malformed: a syntax error in the test file
        else:
            units.append(escape)  # `\'`, `\\`, `\q`: the character itself
            i += 2
    return JsValue("string", _utf16("".join(units)))


def _utf16(text: str) -> str:
    """`text` with surrogate pairs joined, as JavaScript's UTF-16 string would be read back."""
    data = b"".join(struct.pack("<H", ord(c)) if ord(c) < 0x10000 else c.encode("utf-16-le") for c in text)
    return data.decode("utf-16-le", "surrogatepass")


# -- what the sender wrote ---------------------------------------------------------------------

def sent(record: str) -> JsValue | None:
    """A value as the sender writes it (`kind TAB payload`, or `object>` / `function>` and what its
    conversion gave);
    None for a record it would not write."""
    kind, _, payload = record.partition("\t")
    if kind == "deep":
        try:
            return _tree(json.loads(payload))
        except (ValueError, TypeError, KeyError):
            return None
    if kind.startswith(("object>", "function>")):
        outer, _, inner = record.partition(">")
        converted = sent(inner)
        return JsValue(outer, converted=converted) if converted is not None else None
    try:
        if kind == "number":
            return JsValue(kind, -0.0 if payload == "-0" else float(payload)) if _SENT_NUMBER.fullmatch(payload) else None
        if kind == "bigint":
            return JsValue(kind, int(payload)) if re.fullmatch(r"-?[0-9]+", payload) else None
        if kind == "string":
            value = json.loads(payload)
            return JsValue(kind, value) if isinstance(value, str) else None
        if kind == "boolean" and payload in ("true", "false"):
            return JsValue(kind, payload == "true")
    except ValueError:
        return None
    return JsValue(kind) if kind in ("null", "undefined", *OBJECTS) and not payload else None


_SENT_NUMBER = re.compile(r"NaN|-?Infinity|-0|-?[0-9]+(\.[0-9]+)?(e[+-][0-9]+)?")


# -- comparisons --------------------------------------------------------------------------------

def same_value(a: JsValue, b: JsValue) -> bool:
    """`Object.is(a, b)`: `assert.strictEqual`, `deepStrictEqual` of a primitive, jest's `toBe` and
    `toEqual` of a primitive."""
    if a.kind != b.kind or a.kind in OBJECTS:
        return False
    if a.kind == "number":
        return (math.isnan(a.value) and math.isnan(b.value)) or (a.value == b.value and
                                                                 math.copysign(1, a.value) == math.copysign(1, b.value))
    return a.value == b.value


def strict_equal(a: JsValue, b: JsValue) -> bool:
    """`a === b` (NaN is unequal to itself, -0 equals 0)."""
    return a.kind == b.kind and a.kind not in OBJECTS and a.value == b.value


def loose_equal(a: JsValue, b: JsValue) -> bool:
    """`a == b`, with `b` a primitive; an object `a` by what its conversion gave (never against
    null or undefined, which no object equals)."""
    if a.kind in OBJECTS:
        return a.converted is not None and b.kind not in ("null", "undefined") and loose_equal(a.converted, b)
    if a.kind == b.kind:
        return strict_equal(a, b)
    nullish = ("null", "undefined")
    if a.kind in nullish or b.kind in nullish:
        return a.kind in nullish and b.kind in nullish
    if a.kind == "boolean":
        return loose_equal(JsValue("number", float(a.value)), b)
    if b.kind == "boolean":
        return loose_equal(a, JsValue("number", float(b.value)))
    kinds = {a.kind: a.value, b.kind: b.value}
    if kinds.keys() == {"number", "string"}:
        return kinds["number"] == to_number(kinds["string"])
    if kinds.keys() == {"bigint", "string"}:
        return (big := to_bigint(kinds["string"])) is not None and big == kinds["bigint"]
    if kinds.keys() == {"bigint", "number"}:
        return math.isfinite(kinds["number"]) and Fraction(kinds["number"]) == kinds["bigint"]
    return False


@dataclass(frozen=True)
class Tree:
    """An object as the sender read it for a deep check: its prototype (`Object`, `Array`, `null`,
    `other`), whether it has an enumerable own symbol (or its own Symbol.toStringTag, or a Proxy's
    tag), and each own string key -> (enumerable, its value: an enumerable accessor's is what its
    getter returned, as node's deepStrictEqual reads it; None for a non-enumerable accessor, which
    node never reads and so neither does the sender)."""

    proto: str
    symbols: bool
    keys: dict[str, tuple[bool, JsValue | None]]


def _tree(node: object) -> JsValue | None:
    if isinstance(node, str):
        return sent(node)
    if not isinstance(node, dict):
        return None
    if "x" in node:  # a built-in, past the sender's depth: read by no one, equal to nothing
        return JsValue("object")
    keys: dict[str, tuple[bool, JsValue | None]] = {}
    for key, enumerable, value in node.get("k", []):
        keys[key] = (bool(enumerable), None if value is None else _tree(value))
    return JsValue("object", Tree(node["p"], bool(node["s"]), keys))


def _index(key: str) -> bool:
    return key.isdigit() and (key == "0" or key[0] != "0") and int(key) < 2 ** 32 - 1


def deep_strict_equal(actual: JsValue, expected: JsValue) -> bool:
    """node's `assert.deepStrictEqual(actual, expected)` with `expected` a `structure` (or a
    primitive): prototypes alike, the same own enumerable keys, each value so equal, no holes."""
    if not isinstance(expected.value, (dict, list)):
        return same_value(actual, expected)
    tree = actual.value if actual.kind == "object" else None
    if not isinstance(tree, Tree) or tree.symbols:
        return False
    enumerable = {key for key, (listed, _) in tree.keys.items() if listed}
    if isinstance(expected.value, dict):
        return tree.proto == "Object" and enumerable == set(expected.value) and all(
            tree.keys[key][1] is not None and deep_strict_equal(tree.keys[key][1], value)
            for key, value in expected.value.items())
    length = tree.keys.get("length", (False, None))[1]
    if tree.proto != "Array" or length is None or not same_value(length, JsValue("number", float(len(expected.value)))):
        return False
    if any(not _index(key) for key in enumerable):
        return False  # an array's own enumerable non-index property: the literal has none
    items = [tree.keys.get(str(i), (False, None))[1] for i in range(len(expected.value))]
    return all(item is not None and deep_strict_equal(item, value) for item, value in zip(items, expected.value, strict=True))


def nan(value: JsValue) -> bool:
    return value.kind == "number" and math.isnan(value.value)


_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_RADIX = re.compile(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+")


def to_number(text: str) -> float:
    """`Number(text)` (the language's StringToNumber: no `_`, no sign before `0x`, blank is 0)."""
    text = text.strip(_SPACE)
    if not text:
        return 0.0
    if _RADIX.fullmatch(text):
        return _double(int(text, 0))
    if _DECIMAL.fullmatch(text):
        return float(text.replace("Infinity", "inf"))
    return math.nan


def to_bigint(text: str) -> int | None:
    """`StringToBigInt(text)`: None where `BigInt(text)` would throw."""
    text = text.strip(_SPACE)
    if not text:
        return 0
    if _RADIX.fullmatch(text):
        return int(text, 0)
    return int(text) if re.fullmatch(r"[+-]?[0-9]+", text) else None


HOWS = {
    "is": same_value,
    "strict": strict_equal,
    "loose": loose_equal,
    # node's assert.equal: `==`, or both NaN
    "equal": lambda a, b: loose_equal(a, b) or (nan(a) and nan(b)),
    # node's legacy assert.deepEqual of a primitive: `==` or both NaN; an object is never equal
    # (a function is: node compares it with `==`)
    "deep-loose": lambda a, b: a.kind != "object" and (loose_equal(a, b) or (nan(a) and nan(b))),
    # node's deepStrictEqual against an object or array literal
    "deep-strict": deep_strict_equal,
}
"""How a check compares the value sent with the expected one, by the assertion it replaced."""
CONVERTS = {"loose": 1, "equal": 1, "deep-loose": 2, "deep-strict": 3}
"""Checks whose value the sender does more than name, and its flag for each: 1 converts an object
or a function as `==` does, 2 a function only (legacy `deepEqual` never converts an object), 3
reads an object's own properties (`Tree`)."""
