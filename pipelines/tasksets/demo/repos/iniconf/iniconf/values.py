"""Value syntax: how the text after ``key =`` becomes a Python value, and back.

=====================  ====================================================
``8080``, ``-1_000``   ``int`` (also ``0x1F``, ``0o17``, ``0b101``)
``2.5``, ``1e-3``      ``float``
``true``, ``off``      ``bool`` (true/false, yes/no, on/off, any case)
``"a\\tb"``            ``str`` with backslash escapes
``'C:\\temp'``         ``str``, taken literally
``[1, "two", 3.0]``    ``list`` of scalars (a trailing comma is allowed)
anything else          ``str``, as written
=====================  ====================================================

Bare and double-quoted strings may hold ``${key}`` or ``${section:key}`` references;
``$$`` stands for a literal ``$``. Numbers with a leading zero (``0750``) stay strings.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Scalar = str | int | float | bool
Value = Scalar | list[Scalar]

TRUE_WORDS = frozenset({"true", "yes", "on"})
FALSE_WORDS = frozenset({"false", "no", "off"})

_INT_RE = re.compile(r"^[+-]?(?:0|[1-9](?:_?[0-9])*)$")
_PREFIXED_INT_RE = re.compile(r"^[+-]?0(?:x[0-9a-fA-F](?:_?[0-9a-fA-F])*|o[0-7](?:_?[0-7])*|b[01](?:_?[01])*)$")
_FLOAT_RE = re.compile(r"^[+-]?(?:0|[1-9](?:_?[0-9])*)(?:\.[0-9](?:_?[0-9])*)?(?:[eE][+-]?[0-9]+)?$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_BARE_UNSAFE = re.compile(r"""^\s|\s$|^["'\[]|[#;$,\]\n]""")


def strip_comment(text: str) -> str:
    """Drop an inline comment: ``#`` or ``;`` after a blank, outside of quotes."""
    quote = ""
    escaped = False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif quote:
            if char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "#;" and index > 0 and text[index - 1] in " \t":
            return text[:index].strip()
    return text.strip()


def parse_value(text: str, interpolate: Callable[[str], str] = lambda s: s) -> Value:
    """Turn value text into a Python value; ``interpolate`` expands references in strings.

    Raises ``ValueError`` for malformed text (unterminated quotes, bad escapes, nested lists).
    """
    text = text.strip()
    if text.startswith("["):
        return [_scalar(item, interpolate) for item in _list_items(text)]
    return _scalar(text, interpolate)


def _scalar(text: str, interpolate: Callable[[str], str]) -> Scalar:
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'") or "'" in text[1:-1]:
            raise ValueError(f"badly quoted string: {text}")
        return text[1:-1]
    if text.startswith('"'):
        return interpolate(_unescape(text))
    if text.startswith("["):
        raise ValueError(f"lists cannot be nested: {text}")
    return infer(interpolate(text))


def infer(text: str) -> Scalar:
    """The typed value of a bare word: a bool, an int, a float, or the text itself."""
    lowered = text.lower()
    if lowered in TRUE_WORDS:
        return True
    if lowered in FALSE_WORDS:
        return False
    if _INT_RE.match(text) or _PREFIXED_INT_RE.match(text):
        return int(text, 0)
    if _FLOAT_RE.match(text):
        return float(text)
    return text


def _unescape(text: str) -> str:
    chars: list[str] = []
    index = 1
    while index < len(text):
        char = text[index]
        if char == '"':
            if text[index + 1 :].strip():
                raise ValueError(f"text after closing quote: {text}")
            return "".join(chars)
        if char == "\\":
            code = text[index + 1 : index + 2]
            if code == "u":
                digits = text[index + 2 : index + 6]
                if not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
                    raise ValueError(f"bad \\u escape in {text}")
                chars.append(chr(int(digits, 16)))
                index += 6
                continue
            if code not in _ESCAPES:
                raise ValueError(f"unknown escape \\{code} in {text}")
            chars.append(_ESCAPES[code])
            index += 2
            continue
        chars.append(char)
        index += 1
    raise ValueError(f"unterminated string: {text}")


def _list_items(text: str) -> list[str]:
    if not text.endswith("]"):
        raise ValueError(f"unterminated list: {text}")
    body = text[1:-1]
    items: list[str] = []
    quote, start, escaped = "", 0, False
    for index, char in enumerate(body):
        if escaped:
            escaped = False
        elif quote:
            escaped = char == "\\" and quote == '"'
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == ",":
            items.append(body[start:index].strip())
            start = index + 1
    last = body[start:].strip()
    if last:
        items.append(last)
    if any(not item for item in items):
        raise ValueError(f"empty list item in {text}")
    return items


def format_value(value: Value) -> str:
    """The value text that :func:`parse_value` reads back as ``value``."""
    if isinstance(value, list):
        return "[" + ", ".join(format_value(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"cannot write {value!r}: not a finite number")
        return repr(value)
    if isinstance(value, str):
        if value and not _BARE_UNSAFE.search(value) and infer(value) == value:
            return value
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
        return '"' + escaped.replace("$", "$$") + '"'
    raise TypeError(f"cannot write a value of type {type(value).__name__}")


def text_of(value: Value) -> str:
    """How a referenced value reads when it is spliced into a string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        raise ValueError("a list cannot be spliced into a string")
    return str(value)


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION_PART_RE = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)")


def parse_duration(text: str) -> float:
    """Seconds in a duration such as ``90s``, ``1h30m`` or ``250ms``."""
    compact = text.replace(" ", "")
    parts = _DURATION_PART_RE.findall(compact)
    if not parts or "".join(number + unit for number, unit in parts) != compact:
        raise ValueError(f"not a duration: {text!r} (use e.g. 90s, 1h30m, 250ms)")
    return sum(float(number) * _UNITS[unit] for number, unit in parts)
