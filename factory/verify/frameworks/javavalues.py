"""Java's values on the host: a literal of a test file read as javac reads it, a value the
blind-check sender wrote (`javablind_sender.java`) read back, and the comparisons JUnit 5's
`assertEquals` overloads and Java's `==` make.

    int, long, short, byte, char   the numbers, as the overload's primitive type holds them
    float, double                  by their bits, NaN canonical (`floatToIntBits`, as JUnit 5): NaN
                                   equals NaN, -0.0 is not 0.0; with a delta, or within it
    object                         `expected.equals(actual)`: the box's or String's own class, value
                                   equal as its `equals` says (Double's by bits too)
    ==long, ==float, ==double      Java's `==` after binary numeric promotion: NaN equals nothing,
    ==boolean                      -0.0 equals 0.0
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from fractions import Fraction

import tree_sitter

from factory.verify.frameworks.copies.treesitter import source

BOXES = {"int": "java.lang.Integer", "long": "java.lang.Long", "float": "java.lang.Float",
         "double": "java.lang.Double", "char": "java.lang.Character", "boolean": "java.lang.Boolean",
         "String": "java.lang.String", "short": "java.lang.Short", "byte": "java.lang.Byte"}
"""A primitive type (and String) -> the class its boxed value has."""


@dataclass(frozen=True)
class JavaValue:
    type: str
    """A `BOXES` key, or (sent only) the class name of any other object, or `null`."""
    value: int | float | bool | str | None = None
    """A number's value (a char's code), a float or double as a Python float (a float already
    rounded to 32 bits), a string's UTF-16 units as a Python str (lone surrogates kept)."""


NULL = JavaValue("null")

# -- literals, as javac reads them --------------------------------------------------------------

_INTEGERS = ("decimal_integer_literal", "hex_integer_literal", "octal_integer_literal", "binary_integer_literal")
_FLOATS = ("decimal_floating_point_literal", "hex_floating_point_literal")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "s": " ", '"': '"', "'": "'", "\\": "\\"}


def literal(node: tree_sitter.Node) -> JavaValue | None:
    """The value of a literal expression (`5`, `-0.0`, `1_000L`, `0x1p3f`, `'\\n'`, `"a\\u00e9"`,
    `true`), typed as javac types it; None for anything else (a text block, a cast, a name)."""
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return literal(node.named_children[0])
    if node.type == "unary_expression" and source(node.child_by_field_name("operator")) in ("-", "+"):
        operand = node.child_by_field_name("operand")
        negative = source(node.child_by_field_name("operator")) == "-"
        if operand.type in _INTEGERS:
            return integer(source(operand), negative)
        if operand.type in _FLOATS:
            value = floating(source(operand))
            return JavaValue(value.type, -value.value if negative else value.value) if value else None
        return None
    text = source(node)
    if node.type in _INTEGERS:
        return integer(text)
    if node.type in _FLOATS:
        return floating(text)
    if node.type in ("true", "false"):
        return JavaValue("boolean", node.type == "true")
    if node.type == "character_literal":
        units = _unescape(text[1:-1])
        return JavaValue("char", ord(units)) if units is not None and len(units) == 1 else None
    if node.type == "string_literal" and text.startswith('"') and not text.startswith('"""'):
        units = _unescape(text[1:-1])
        return JavaValue("String", units) if units is not None else None
    return None


def integer(text: str, negative: bool = False) -> JavaValue | None:
    """An int or long literal, in range as javac wants it (2147483648 only after a minus)."""
    long = text[-1] in "lL"
    digits = text.rstrip("lL").replace("_", "")
    decimal = digits[:2].lower() not in ("0x", "0b") and not (len(digits) > 1 and digits[0] == "0")
    value = int(digits, 10 if decimal else 0) if decimal or digits[:2].lower() in ("0x", "0b") else int(digits, 8)
    bits = 64 if long else 32
    if decimal:
        if value > 2 ** (bits - 1) or value == 2 ** (bits - 1) and not negative:
            return None
    elif value >= 2 ** bits:
        return None
    else:
        value = value - 2 ** bits if value >= 2 ** (bits - 1) else value  # 0xFFFFFFFF is -1
    return JavaValue("long" if long else "int", -value if negative else value)


def floating(text: str) -> JavaValue | None:
    """A float (`f`) or double literal, rounded to nearest once, as javac rounds it."""
    is_float = text[-1] in "fF"
    digits = text.rstrip("fFdD").replace("_", "")
    if digits[:2].lower() == "0x":
        exact = _hex_fraction(digits)
    else:
        exact = Fraction(digits) if re.fullmatch(r"[0-9]*\.?[0-9]*([eE][+-]?[0-9]+)?", digits) else None
    if exact is None:
        return None
    value = to_float(exact) if is_float else _to_double(exact)
    return None if math.isinf(value) else JavaValue("float" if is_float else "double", value)


def _hex_fraction(text: str) -> Fraction | None:
    match = re.fullmatch(r"0[xX]([0-9a-fA-F]*)\.?([0-9a-fA-F]*)[pP]([+-]?[0-9]+)", text)
    if match is None:
        return None
    whole, frac, power = match.groups()
    mantissa = int(whole + frac or "0", 16)
    return Fraction(mantissa) * Fraction(2) ** (int(power) - 4 * len(frac))


def _to_double(exact: Fraction) -> float:
    try:
        return exact.numerator / exact.denominator  # Python divides ints correctly rounded
    except OverflowError:
        return math.inf


def to_float(exact: Fraction) -> float:
    """`exact` rounded once to the nearest float (ties to even), as a Python float: rounding to a
    double first could round twice."""
    near = _f32(_to_double(exact))
    if math.isinf(near):
        return near
    candidates = [c for c in (_step(near, -1), near, _step(near, 1)) if not math.isinf(c)]
    best = min(abs(Fraction(c) - exact) for c in candidates)
    ties = [c for c in candidates if abs(Fraction(c) - exact) == best]
    return next((c for c in ties if not struct.unpack("<I", struct.pack("<f", c))[0] & 1), ties[0])


def _f32(value: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def _step(value: float, by: int) -> float:
    """The float `by` units away from `value` (a float), towards larger magnitude for a positive `by`."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    return struct.unpack("<f", struct.pack("<I", max(0, min(bits + by, 0xFFFFFFFF))))[0]


def _unescape(body: str) -> str | None:
    """A character or string literal's body as javac reads it (UTF-16 units: `\\ud83d` stays a lone
    surrogate); None for a malformed one."""
    units: list[str] = []
    i = 0
    while i < len(body):
        if body[i] != "\\":
            units.append(body[i])
            i += 1
            continue
        escape = body[i + 1:i + 2]
        if escape in _ESCAPES:
            units.append(_ESCAPES[escape])
            i += 2
        elif match := re.match(r"u+([0-9a-fA-F]{4})", body[i + 1:]):
            units.append(chr(int(match[1], 16)))
            i += 1 + len(match[0])
        elif match := re.match(r"[0-3][0-7]{0,2}|[0-7]{1,2}", body[i + 1:]):
            units.append(chr(int(match[0], 8)))
            i += 1 + len(match[0])
        else:
            return None
    text = "".join(units)
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


# -- what the sender wrote ----------------------------------------------------------------------

_NUMBER_CLASSES = {"java.lang.Integer": "int", "java.lang.Long": "long", "java.lang.Short": "short",
                   "java.lang.Byte": "byte", "java.lang.Character": "char"}


def sent(record: str) -> JavaValue | None:
    """A value as the sender writes it (`class TAB payload`, or `null`); None for a record it
    would not write."""
    if record == "null":
        return NULL
    name, tab, payload = record.partition("\t")
    if not tab or not re.fullmatch(r"[\w.$\[\];]+", name):
        return None
    try:
        if name in _NUMBER_CLASSES:
            return JavaValue(_NUMBER_CLASSES[name], int(payload))
        if name == "java.lang.Double":
            return JavaValue("double", struct.unpack(">d", bytes.fromhex(payload.zfill(16)))[0])
        if name == "java.lang.Float":
            return JavaValue("float", struct.unpack(">f", bytes.fromhex(payload.zfill(8)))[0])
        if name == "java.lang.Boolean" and payload in ("true", "false"):
            return JavaValue("boolean", payload == "true")
        if name == "java.lang.String" and len(payload) % 4 == 0:
            units = bytes.fromhex(payload).decode("utf-16-be", "surrogatepass")
            return JavaValue("String", units)
    except (ValueError, struct.error):
        return None
    return JavaValue(name) if not payload and name not in BOXES.values() else None


# -- comparisons --------------------------------------------------------------------------------

def _bits(value: float, width: int) -> int:
    """`doubleToLongBits` / `floatToIntBits`: the bits, every NaN as one."""
    if math.isnan(value):
        return -1
    return struct.unpack("<Q", struct.pack("<d", value))[0] if width == 64 else \
        struct.unpack("<I", struct.pack("<f", value))[0]


INTEGRAL = ("int", "long", "short", "byte", "char")


def _number(actual: JavaValue, expected: JavaValue) -> bool:
    return actual.type in INTEGRAL and actual.value == expected.value


def _boolean(actual: JavaValue, expected: JavaValue) -> bool:
    return actual.type == "boolean" and actual.value == expected.value


def _widened(expected: JavaValue, width: int) -> float:
    """The expected literal converted to the overload's float or double, rounded once."""
    return to_float(Fraction(expected.value)) if width == 32 and isinstance(expected.value, int) else float(expected.value)


def _floating(width: int):
    def equal(actual: JavaValue, expected: JavaValue) -> bool:
        return isinstance(actual.value, float) and _bits(actual.value, width) == _bits(_widened(expected, width), width)
    return equal


def objects_equal(actual: JavaValue, expected: JavaValue) -> bool:
    """`expected.equals(actual)`, `expected` a literal boxed as javac boxes it."""
    if actual.type != expected.type:
        return False  # Integer.equals(Long) is false: a box equals only its own class
    if expected.type in ("float", "double"):
        return _floating(32 if expected.type == "float" else 64)(actual, expected)
    return actual.value == expected.value


def within(actual: JavaValue, expected: JavaValue, delta: float, width: int) -> bool:
    """JUnit 5's `assertEquals(expected, actual, delta)`: equal as above, or `|e - a| <= delta`
    (in float arithmetic for floats)."""
    if not isinstance(actual.value, float) or math.isnan(delta) or delta < 0:
        return False  # JUnit fails an invalid delta whatever the values
    if _floating(width)(actual, expected):
        return True
    difference = abs(_widened(expected, width) - actual.value)
    return (_f32(difference) if width == 32 else difference) <= delta


def _promoted(width: int):
    """`actual == expected` after binary numeric promotion to float or double (the sender sent the
    promoted value): NaN equals nothing, -0.0 equals 0.0."""
    def equal(actual: JavaValue, expected: JavaValue) -> bool:
        return isinstance(actual.value, float) and actual.value == _widened(expected, width)
    return equal


HOWS = {
    **dict.fromkeys(INTEGRAL, _number),
    "float": _floating(32), "double": _floating(64), "object": objects_equal,
    "==long": _number, "==float": _promoted(32), "==double": _promoted(64), "==boolean": _boolean,
}
"""How a check compares the value sent with the expected literal, by the overload the assertion's
stand-in resolved to (`javablind.HELPERS`): the same one javac chose for the assertion."""
