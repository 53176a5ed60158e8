"""Blind checks in Java (JUnit 5): expected values that never enter the JVM that runs the tests.

The JUnit launcher runs the code under test in the JVM that runs the tests, and that JVM reads
every hidden test (their sources, to compile them; their classes, to run them): a forger that
reads them answers each input with what the test naming it expects. So in every FAIL_TO_PASS
test, its copies alike, each check of a statement the test always reaches against a literal of a
primitive or a String is rewritten before the run (`plan`), on as many lines as it took:

    assertEquals(512.0, eval("2 ^ 3 ^ 2"))        ->   __factoryEquals("9f0c2d1e", 0d, eval("2 ^ 3 ^ 2"))
    assertNotEquals("", name, "a message")       ->   __factoryEquals("47aa01b3", "", name)
    assertEquals(0.1f, ratio(), 1e-6f)           ->   __factoryEquals("c3d9e8f0", 0f, ratio(), 0f)
    assertTrue(e.position() == 4)                ->   __factoryIs("0b7e44aa", 0, e.position())

The expected literal becomes a zero of its own type, so javac resolves the stand-in's overloads
(`HELPERS`, JUnit 5's `assertEquals` set, appended on one line to the file's top-level class) as
it resolved the assertion's: the overload it picks sends the value with its name (`int`, `double`,
`object`, `==long`, ...), and the host compares as that JUnit overload or Java's `==` would
(`javavalues.HOWS`). The stand-ins call the sender (`javablind_sender.java`), which root compiles
onto the boot class path (`-Xbootclasspath/a` in JAVA_TOOL_OPTIONS) and the stand-ins look up
through the boot loader alone, so no class of the patch can stand in for it; it appends `id TAB
how TAB value` to the file root reads after the run. The ids are drawn at random, so the twins of
a copied test differ in nothing a reader of the files can see.

What stays readable: checks against anything but such a literal (an object, an array, a
variable, a text block, a cast), an expected value given second, `assertSame`, Hamcrest and
AssertJ, JUnit 4's `Assert`, checks inside lambdas, loops or after a statement that may return,
tests of a file that declares its own assertion methods, and whatever the test passes the code
under test (its inputs, messages). A hidden test left with such a check against a literal is
named in the verdict's `weak controls` (`Blind.readable`); the copies and the canary stand behind it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from pathlib import Path

import tree_sitter

from factory.records import Task
from factory.verify import results
from factory.verify.frameworks import blindcheck
from factory.verify.frameworks.base import TRUSTED
from factory.verify.frameworks.blindcheck import Blind, fresh_id
from factory.verify.frameworks.copies import java, plant
from factory.verify.frameworks.copies.base import Copies
from factory.verify.frameworks.copies.treesitter import Edit, apply, parse, source, walk
from factory.verify.frameworks.javavalues import HOWS, JavaValue, literal, sent, within
from factory.verify.results.names import clean

SENDER_SOURCE = (Path(__file__).parent / "javablind_sender.java").read_text()
SENDER_DIR = f"{TRUSTED}/java-blind"
"""Root's folder of the sender's source and class, on the tests' boot class path."""
SENDER = f"{SENDER_DIR}/factoryblind/Seen.java"

_BOXES = {"short": "Short", "byte": "Byte", "int": "Integer", "long": "Long", "float": "Float",
          "double": "Double", "char": "Character"}
_SEND = ("private static void __factorySeen(String i, String h, Object a) { try { "
         "Class.forName(\"factoryblind.Seen\", true, null).getMethod(\"seen\", String.class, String.class, Object.class)"
         ".invoke(null, i, h, a); } catch (ReflectiveOperationException e) { throw new IllegalStateException("
         "\"factory's blind-check sender is not on the boot class path\", e); } }")
HELPERS = " ".join([
    _SEND,
    *(f"private static void __factoryEquals(String i, {e} e, {a} a) {{ __factorySeen(i, \"{p}\", a); }}"
      for p, box in _BOXES.items() for e, a in ((p, p), (p, box), (box, p), (box, box))),
    "private static void __factoryEquals(String i, Object e, Object a) { __factorySeen(i, \"object\", a); }",
    *(f"private static void __factoryEquals(String i, {p} e, {p} a, {p} d) {{ __factorySeen(i, \"{p}~\", a); }}"
      for p in ("float", "double")),
    *(f"private static void __factoryIs(String i, {p} e, {p} a) {{ __factorySeen(i, \"=={p}\", a); }}"
      for p in ("long", "float", "double", "boolean")),
])
"""The stand-ins of a rewritten file, one line: JUnit 5's `assertEquals` overloads (which its
`assertNotEquals` shares) and `==`'s numeric promotions, each sending the value under its name."""
_ZEROS = {"int": "0", "long": "0L", "float": "0f", "double": "0d", "char": "'\\0'", "boolean": "false", "String": '""'}


@dataclass(frozen=True)
class BlindCheck:
    """What one blind check expects, on the host only."""

    test: str
    """The id its test is reported under in this run (a renamed original's or a copy's)."""
    kind: str
    """`equals` (assertEquals / assertNotEquals, and with a delta) or `is` (`==` in assertTrue)."""
    expected: JavaValue
    negated: bool = False
    """`assertNotEquals`, `assertFalse(a == b)`, `!=`: passes when the comparison does not hold."""
    delta: float | None = None
    where: str = ""
    """`file:line`, for the verdict."""

    def passes(self, value: tuple[str, JavaValue]) -> bool:
        how, actual = value
        if self.delta is not None:
            width = {"float~": 32, "double~": 64}.get(how)
            if width is None or self.delta != self.delta or self.delta < 0:
                return False  # JUnit fails an invalid delta, negated or not
            return within(actual, self.expected, self.delta, width) != self.negated
        if how not in HOWS or how.startswith("==") != (self.kind == "is"):
            return False  # a value the stand-ins of this check do not send
        return HOWS[how](actual, self.expected) != self.negated


def runs_blind(task: Task) -> bool:
    """Java tasks whose command sets no JAVA_TOOL_OPTIONS of its own (which would drop the sender)."""
    return task.language == "java" and "JAVA_TOOL_OPTIONS" not in (task.tests.command or "")


def planned(task: Task, files: dict[str, str], copies: Copies, rng: random.Random) -> Blind:
    """The blind checks of a `command` task's FAIL_TO_PASS tests and their copies, in the test
    files read back (`files`) as the copies left them."""
    if not runs_blind(task):
        return Blind()
    return plan({**files, **copies.files}, [*plant.run_ids(copies, list(task.FAIL_TO_PASS)), *copies.copies], rng,
                frozenset(copies.copies))


def plan(files: dict[str, str], tests: list[str], rng: random.Random, copies_of: frozenset[str] = frozenset()) -> Blind:
    """The blind checks of the tests reported under the ids `tests` (FAIL_TO_PASS originals under
    their run ids, and their copies: `copies_of`), written into `files` (the test files as they will run)."""
    wanted = {clean(t): t for t in tests}
    blind = Blind(sender={SENDER: SENDER_SOURCE}, setup=[f"javac -nowarn -d {SENDER_DIR} {SENDER} > /dev/null"],
                  environment=f"JAVA_TOOL_OPTIONS=-Xbootclasspath/a:{SENDER_DIR}", reads=_reads)
    for path, text in files.items():
        root = parse("java", text) if path.endswith(".java") else None
        if root is None:
            continue
        names = _assertion_names(root)
        edits: list[Edit] = []
        classes: set[int] = set()
        for unit in java.read({path: text}).units:
            test = next((wanted[clean(f)] for f in unit.forms(unit.name) if clean(f) in wanted), None)
            method = root.descendant_for_byte_range(unit.start, unit.end)
            if test is None or method.type != "method_declaration" or java.ends_at_throw(method):
                continue
            if java.parameterized(method):
                continue  # its body runs once per row: a check would send a value per row, not one
            taken = 0
            for call in java.reached_calls(method.child_by_field_name("body")):
                found = _blind(call, names)
                if found is None:
                    continue
                taken += 1
                stand_in, args, kind, expected, negated, delta = found
                check_id = fresh_id(blind.checks, rng)
                blind.checks[check_id] = BlindCheck(test, kind, expected, negated, delta, f"{path}:{call.start_point[0] + 1}")
                texts = [a.text if isinstance(a, _Zero) else source(a) for a in args]
                lines = "\n" * (source(call).count("\n") - "".join(texts).count("\n"))
                edits.append(Edit(call.start_byte, call.end_byte, f'{stand_in}("{check_id}", {", ".join(texts)}{lines})'))
                classes.add(_top_class(root, call).child_by_field_name("body").end_byte - 1)
            if _literal_checks(method) > taken and test not in copies_of:
                blind.readable.append(test)
        if not edits:
            continue
        new = apply(text, [*edits, *(Edit(at, at, f" {HELPERS}\n") for at in classes)])
        if parse("java", new) is not None:
            blind.files[path] = new
        else:  # the grammar no longer reads it: run the file as it was
            blind.checks = {k: c for k, c in blind.checks.items() if not c.where.startswith(f"{path}:")}
    return blind


@dataclass(frozen=True)
class _Zero:
    """The expected literal's stand-in: a zero of its type, so javac picks the same overload."""

    text: str


_NUMBERS = ("int", "long", "float", "double")
_JUPITER = "org.junit.jupiter.api.Assertions"
_NAMES = ("assertEquals", "assertNotEquals", "assertTrue", "assertFalse")


def _assertion_names(root: tree_sitter.Node) -> set[str]:
    """The forms a call of JUnit 5's assertions takes in this file: `assertEquals` when
    statically imported from Assertions (and from nowhere else), `Assertions.assertEquals` when
    Assertions is imported, and the fully qualified name. A file that declares a method of one of
    these names takes none of its unqualified calls."""
    imports = [re.sub(r"\s+", " ", source(n)) for n in root.children if n.type == "import_declaration"]
    taken = {f"{_JUPITER}.{name}" for name in _NAMES}
    if any(i in (f"import {_JUPITER};", "import org.junit.jupiter.api.*;") for i in imports):
        taken.update(f"Assertions.{name}" for name in _NAMES)
    own = {source(n.child_by_field_name("name")) for n in walk(root) if n.type == "method_declaration"}
    for name in _NAMES:
        static = [i for i in imports if i.startswith("import static ") and (i.endswith(f".{name};") or i.endswith(".*;"))]
        if static and all(i in (f"import static {_JUPITER}.{name};", f"import static {_JUPITER}.*;") for i in static) \
                and name not in own:
            taken.add(name)
    return taken


def _blind(call: tree_sitter.Node, names: set[str]):
    """(the stand-in, its arguments after the id, `equals` or `is`, the expected literal, negated,
    the delta) of a check this module rewrites; None for any other call."""
    target, name = call.child_by_field_name("object"), source(call.child_by_field_name("name"))
    if (f"{source(target)}.{name}" if target is not None else name) not in names:
        return None
    args = [a for a in call.child_by_field_name("arguments").named_children if a.type not in ("line_comment", "block_comment")]
    if name in ("assertTrue", "assertFalse"):
        if not 1 <= len(args) <= 2 or not _plain_message(args[1:]) or args[0].type != "binary_expression":
            return None
        operator = source(args[0].child_by_field_name("operator"))
        left, right = args[0].child_by_field_name("left"), args[0].child_by_field_name("right")
        sides = [(e, a) for e, a in ((left, right), (right, left)) if literal(e) is not None and literal(a) is None]
        if operator not in ("==", "!=") or not sides or literal(sides[0][0]).type == "String":
            return None  # `==` of a String literal is identity: the interned literal is in the JVM
        expected, actual = literal(sides[0][0]), sides[0][1]
        return "__factoryIs", [_Zero(_ZEROS[expected.type]), actual], "is", expected, \
            (name == "assertFalse") != (operator == "!="), None
    if name not in ("assertEquals", "assertNotEquals") or not 2 <= len(args) <= 4:
        return None
    expected, actual = literal(args[0]), args[1]
    if expected is None or literal(actual) is not None:
        return None
    # (expected, actual), then a delta unless the third is a message, then a message
    delta = literal(args[2]) if len(args) >= 3 and args[2].type != "string_literal" else None
    rest = args[3:] if len(args) >= 3 and args[2].type != "string_literal" else args[2:]
    if len(args) >= 3 and args[2].type != "string_literal" and (delta is None or delta.type not in _NUMBERS) \
            or len(rest) > 1 or not _plain_message(rest):
        return None
    zeros = [_Zero(_ZEROS[expected.type]), actual, *([_Zero(_ZEROS[delta.type])] if delta is not None else [])]
    return "__factoryEquals", zeros, "equals", expected, name == "assertNotEquals", \
        float(delta.value) if delta is not None else None


def _plain_message(rest: list[tree_sitter.Node]) -> bool:
    """No message, or a string literal: dropping it runs no code (a Supplier's would)."""
    return all(n.type == "string_literal" and not source(n).startswith('"""') for n in rest)


def _literal_checks(method: tree_sitter.Node) -> int:
    """How many assertion calls of the test hold a literal outside a lambda (an input handed to
    `assertThrows` is not an expected value)."""
    def literal_inside(node: tree_sitter.Node) -> bool:
        return node.type != "lambda_expression" and (literal(node) is not None or any(literal_inside(c) for c in node.named_children))
    return sum(1 for n in walk(method) if n.type == "method_invocation"
               and source(n.child_by_field_name("name")).startswith("assert")
               and any(literal_inside(a) for a in n.child_by_field_name("arguments").named_children))


def _top_class(root: tree_sitter.Node, node: tree_sitter.Node) -> tree_sitter.Node:
    while node.parent is not None and node.parent != root:
        node = node.parent
    return node


# -- judging, on the host ------------------------------------------------------------------------

def _reads(line: str) -> tuple[str, tuple[str, JavaValue]] | None:
    """`id TAB how TAB record`, as the sender writes it."""
    check_id, _, rest = line.partition("\t")
    how, _, record = rest.partition("\t")
    value = sent(record)
    return (check_id, (how, value)) if value is not None else None


def judge(read: results.Results, blind: Blind, written: bytes | None) -> tuple[results.Results, dict[str, str], str | None]:
    """`blindcheck.judge` of the JVM's values."""
    return blindcheck.judge(read, replace(blind, reads=_reads), written)
