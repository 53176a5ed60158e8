"""Blind checks in Java (`frameworks/javablind.py`, `javavalues.py`, `javablind_sender.java`): which
JUnit 5 checks are rewritten and how, literals read as javac reads them, the host's judging held
to real JUnit's on about a hundred checks run both ways in the demo image, and every demo-java
task's gold fix run with its copies and blind checks planted: every original passes, every copy
fails, and no plan leaves a hidden test's expected value in a file."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from factory.records import TestStatus
from factory.verify.frameworks import javablind
from factory.verify.frameworks.blindcheck import Blind
from factory.verify.frameworks.copies.base import COPY_WRITERS
from factory.verify.frameworks.copies.treesitter import parse, walk
from factory.verify.frameworks.javavalues import JavaValue, literal
from factory.verify.results import read, status_of
from factory.verify.results.record import Case, Results
from tests.verify.copies.realrun import demo_tasks, gold_repo, plant

IMAGE = "factory/java:1"
JUNIT = "/usr/share/java/junit-platform-console-standalone.jar"
DEMO_TESTS = Path(__file__).parents[2] / "pipelines/tasksets/demo-java/repos/calc/src/test/java/calc"

CHECKS = """\
package calc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

class CheckTest {
    @Test
    void taken() {
        assertEquals(512.0, eval("2 ^ 3 ^ 2"));
        Assertions.assertNotEquals("", name(),
            "a message");
        org.junit.jupiter.api.Assertions.assertEquals(0.1f, ratio(), 1e-6f, "close");
        assertTrue(position() == -4L);
        assertEquals(eval("x"), 3.0);
        assertEquals(new int[] {1}, values());
        assertEquals(2, 2);
        assertEquals("a", name(), () -> "supplied");
        Runnable later = () -> assertEquals(1, position());
        assertTrue(name() == "interned");
        if (position() > 0) {
            return;
        }
        assertEquals(7, position());
    }
}
"""


def test_a_check_against_a_literal_is_rewritten_to_a_stand_in_with_a_zero_of_its_type():
    blind = javablind.plan({"CheckTest.java": CHECKS}, ["calc.CheckTest.taken()"], random.Random(3))
    text = blind.files["CheckTest.java"]
    checks = list(blind.checks.values())
    assert [(c.kind, c.expected, c.negated, c.delta) for c in checks] == [
        ("equals", JavaValue("double", 512.0), False, None),
        ("equals", JavaValue("String", ""), True, None),
        ("equals", JavaValue("float", literal_of("0.1f").value), False, literal_of("1e-6f").value),
        ("is", JavaValue("long", -4), False, None)]
    ids = list(blind.checks)
    assert f'__factoryEquals("{ids[0]}", 0d, eval("2 ^ 3 ^ 2"));' in text
    assert f'__factoryEquals("{ids[1]}", "", name()\n);' in text  # as many lines as the assertion took
    assert f'__factoryEquals("{ids[2]}", 0f, ratio(), 0f);' in text
    assert f'__factoryIs("{ids[3]}", 0L, position());' in text
    # what stays: the literal second, an array, two literals, a Supplier's message, a lambda's check,
    # `==` of a String (identity), and whatever follows a statement that may return
    for kept in ('assertEquals(eval("x"), 3.0);', "assertEquals(new int[] {1}, values());", "assertEquals(2, 2);",
                 'assertEquals("a", name(), () -> "supplied");', "assertEquals(1, position());",
                 'assertTrue(name() == "interned");', "assertEquals(7, position());"):
        assert kept in text
    assert text.count("\n") == CHECKS.count("\n") + 1 and parse("java", text) is not None
    assert [c.where for c in checks] == ["CheckTest.java:13", "CheckTest.java:14", "CheckTest.java:16", "CheckTest.java:17"]
    # the checks left as written keep their literals readable: the verdict names the test
    assert blind.readable == ["calc.CheckTest.taken()"]
    only_blind = CHECKS[:CHECKS.index('        assertEquals(eval("x")')] + "    }\n}\n"
    assert not javablind.plan({"CheckTest.java": only_blind}, ["calc.CheckTest.taken()"], random.Random(3)).readable


def test_junit4_a_test_of_another_id_and_a_file_with_its_own_assertions_are_left_alone():
    junit4 = CHECKS.replace("org.junit.jupiter.api.Assertions.assertEquals;", "org.junit.Assert.assertEquals;")
    assert len(javablind.plan({"T.java": junit4}, ["calc.CheckTest.taken()"], random.Random(1)).checks) == 3  # the qualified ones
    assert not javablind.plan({"T.java": CHECKS}, ["calc.CheckTest.other()"], random.Random(1)).checks
    own = CHECKS.replace("class CheckTest {", "class CheckTest {\n    static void assertEquals(double a, double b) {}\n")
    assert [c.kind for c in javablind.plan({"T.java": own}, ["calc.CheckTest.taken()"], random.Random(1)).checks.values()] \
        == ["equals", "equals", "is"]  # the unqualified assertEquals is the file's own


def test_a_parameterized_row_gets_no_blind_check():
    # the body runs once per row: a check sending a value per row would fail every passing row
    rows = CHECKS.replace("    @Test\n    void taken() {",
                          '    @org.junit.jupiter.params.ParameterizedTest\n    @org.junit.jupiter.params.provider.CsvSource({"1", "2"})\n'
                          "    void taken(int n) {")
    assert "ParameterizedTest" in rows
    assert not javablind.plan({"T.java": rows}, ["calc.CheckTest.taken(int)[2]"], random.Random(1)).checks
    assert javablind.plan({"T.java": CHECKS}, ["calc.CheckTest.taken()"], random.Random(1)).checks


def literal_of(text: str) -> JavaValue | None:
    root = parse("java", f"class A {{ Object x = {text}; }}")
    declarator = next(n for n in walk(root) if n.type == "variable_declarator")
    return literal(declarator.child_by_field_name("value"))


@pytest.mark.parametrize(("text", "value"), [
    ("2147483647", JavaValue("int", 2**31 - 1)), ("-2147483648", JavaValue("int", -2**31)), ("2147483648", None),
    ("0xFFFFFFFF", JavaValue("int", -1)), ("0x7fff_ffffL", JavaValue("long", 2**31 - 1)), ("017", JavaValue("int", 15)),
    ("0b101", JavaValue("int", 5)), ("-9223372036854775808L", JavaValue("long", -2**63)), ("1_000", JavaValue("int", 1000)),
    ("-0.0", JavaValue("double", -0.0)), ("1e-3", JavaValue("double", 0.001)), ("0x1.8p1", JavaValue("double", 3.0)),
    ("3d", JavaValue("double", 3.0)), ("1e400", None), ("'\\u0041'", JavaValue("char", 65)), ("'\\n'", JavaValue("char", 10)),
    ("'\\0'", JavaValue("char", 0)), ('"a\\tb\\101"', JavaValue("String", "a\tbA")), ("true", JavaValue("boolean", True)),
    ('"""\n  x"""', None), ("(int) 5", None), ("-'a'", None),
])
def test_literals_are_read_as_javac_reads_them(text, value):
    assert literal_of(text) == value


def test_a_float_literal_is_rounded_once_to_32_bits():
    # 1.00000017881393432617187499 lies just under the midpoint of two floats; through a double it
    # rounds up to the midpoint, then to even: twice rounded, a float away from javac's
    assert literal_of("1.00000017881393432617187499f").value == 1.0000001192092896
    assert literal_of("0.1f").value == 0.10000000149011612
    assert literal_of("1e-45f").value == 1.401298464324817e-45


def _results(statuses: dict[str, TestStatus]) -> Results:
    return Results(cases=tuple(Case(id=t, status=s) for t, s in statuses.items()), exit_code=0)


def test_a_passed_test_fails_unless_each_blind_check_sent_one_equal_value_of_its_kind():
    check = javablind.BlindCheck
    blind = Blind(checks={"a1": check("t1", "equals", JavaValue("double", 0.25)),
                          "a2": check("t2", "equals", JavaValue("String", "x")),
                          "a3": check("t3", "is", JavaValue("int", 2)),
                          "a4": check("t4", "equals", JavaValue("double", 1.0), delta=0.1)})
    ran = _results({f"t{i}": TestStatus.passed for i in range(1, 5)})
    values = (b"a1\tdouble\tjava.lang.Double\t3fd0000000000000\n"  # 0.25
              b"a2\tobject\tjava.lang.String\t0078\n"
              b"a3\t==long\tjava.lang.Long\t2\n"
              b"a4\tdouble~\tjava.lang.Double\t3ff0cccccccccccd\n")  # 1.05: within 0.1 of 1.0
    judged, why, forged = javablind.judge(ran, blind, values)
    assert forged is None and not why
    wrong = values.replace(b"a3\t==long", b"a3\tint").replace(b"0078", b"0079")
    judged, why, forged = javablind.judge(ran, blind, wrong)
    assert set(why) == {"t2", "t3"} and status_of(judged, "t2")[0] is TestStatus.failed
    _, why, _ = javablind.judge(ran, blind, values + values.splitlines(keepends=True)[0])
    assert set(why) == {"t1"} and "2 values" in why["t1"]
    _, _, forged = javablind.judge(ran, blind, values + b"ffff0000\tdouble\tjava.lang.Double\t0\n")
    assert forged and "no check" in forged


# -- the host against real JUnit ---------------------------------------------------------------

HELPERS = """\
    static double d(double v) { return v; }
    static float f(float v) { return v; }
    static int i(int v) { return v; }
    static long l(long v) { return v; }
    static char c(char v) { return v; }
    static boolean b(boolean v) { return v; }
    static String s(String v) { return v; }
    static Object o(Object v) { return v; }
    static Integer boxed(Integer v) { return v; }
"""
PAIRS = [
    # doubles: JUnit compares bits (NaN equals NaN, -0.0 is not 0.0); ints, floats widen to double
    "assertEquals(512.0, d(Math.pow(2, 9)))", "assertEquals(512.0, i(512))", "assertEquals(0.1, f(0.1f))",
    "assertEquals(-0.0, d(0.0))", "assertEquals(-0.0, d(-0.0))", "assertEquals(0.0, d(-1 * 0.0))",
    "assertEquals(0.3, d(0.1 + 0.2))", "assertNotEquals(0.0, d(Double.NaN))", "assertNotEquals(-0.0, d(0.0))",
    "assertEquals(0.1, (Double) d(0.1))", "assertEquals(1e-3, d(0.001))", "assertEquals(0x1.8p1, d(3.0))",
    # floats, and ints that a float overload rounds
    "assertEquals(0.1f, f(0.1f))", "assertEquals(16777216f, i(16777217))", "assertEquals(1.0f, f(1.0000001f))",
    "assertEquals(-0.0f, f(0.0f))", "assertNotEquals(1.5f, f(Float.NaN))",
    # deltas, in the overload's arithmetic
    "assertEquals(1.0, d(1.05), 0.1)", "assertEquals(1.0, d(1.2), 0.1)", "assertEquals(1.0, d(Double.NaN), 0.1)",
    "assertEquals(1.0f, f(1.05f), 0.1f)", "assertEquals(5, i(6), 1)", "assertEquals(0.0, d(-0.0), 0)",
    "assertNotEquals(1.0, d(1.05), 0.1)", "assertNotEquals(1.0, d(2.0), 0.1)", "assertEquals(1.0, d(1.0), -1.0)",
    "assertEquals(Double.NaN == 0 ? 1.0 : 2.0, d(2.0))",  # not a literal: stays as it is
    # integral types and chars
    "assertEquals(2, i(2))", "assertEquals(2, l(2))", "assertEquals(2L, i(2))", "assertEquals(2, (short) i(2))",
    "assertEquals(97, c('a'))", "assertEquals('a', c('a'))", "assertEquals('a', i(97))", "assertEquals(2, boxed(2))",
    "assertEquals(2, boxed(null))", "assertNotEquals(2, i(3))", "assertEquals(-2147483648, i(Integer.MIN_VALUE))",
    "assertEquals(0xFFFFFFFF, i(-1))", "assertEquals(4294967295L, l(-1))", "assertEquals('\\u00e9', s(\"é\").charAt(0))",
    # Object.equals: the literal's box, value by its equals
    "assertEquals(2, o(2))", "assertEquals(2, o(2L))", "assertEquals(2.0, o(2.0f))", "assertEquals(-0.0, o(0.0))",
    "assertEquals(0.0, o(Double.valueOf(0.0)))", "assertEquals(true, o(Boolean.TRUE))", "assertEquals(true, b(1 > 0))",
    "assertEquals(false, o(\"false\"))", "assertEquals('a', o('a'))", "assertEquals('a', o(\"a\"))",
    "assertNotEquals(2, o(2L))", "assertEquals(2, o(null))",
    # strings: content, UTF-16 units, never identity
    "assertEquals(\"abc\", s(new String(\"abc\")))", "assertEquals(\"abc\", s(\"ab\" + i(0)))",
    "assertEquals(\"abc\", new StringBuilder(\"abc\"))", "assertEquals(\"abc\", s(null))", "assertEquals(\"\", s(\"\"))",
    "assertEquals(\"\\u00e9\\ud83d\\ude00\", s(new String(new char[] {'\\u00e9', '\\ud83d', '\\ude00'})))",
    "assertEquals(\"\\ud83d\", s(\"\\ud83d\\ude00\").substring(0, 1))", "assertEquals(\"a\\tb\", s(\"a\" + (char) 9 + \"b\"))",
    "assertNotEquals(\"abc\", s(new String(\"abc\")))", "assertNotEquals(\"abc\", s(\"abd\"))",
    "assertEquals(\"x\", s(\"x\"), \"a message\")",
    # `==`: binary numeric promotion, NaN equals nothing, -0.0 equals 0.0
    "assertTrue(d(-0.0) == 0.0)", "assertTrue(d(Double.NaN) == 0.0)", "assertFalse(d(Double.NaN) != 1.0)",
    "assertTrue(i(16777217) == 16777216f)", "assertTrue(l(16777217) == 16777216f)", "assertTrue(f(0.1f) == 0.1)",
    "assertTrue(2 == i(2), \"two\")", "assertTrue(c('a') == 97)", "assertTrue(b(true) == true)",
    "assertFalse(b(true) == false)", "assertTrue(boxed(7) == 7L)", "assertTrue(l(1L << 40) != 0)",
    "assertTrue(d(1e300 * 10) == 1e308)", "assertTrue(i(3) == 3.0)", "assertFalse(i(3) != 3)",
    # an actual that throws: an error either way
    "assertEquals(1, i(Integer.parseInt(\"x\")))",
]


def _pairs_source() -> str:
    tests = "".join(f"    @Test\n    void p{n}() {{\n        {pair};\n    }}\n\n" for n, pair in enumerate(PAIRS))
    return (f"package calc;\n\nimport static org.junit.jupiter.api.Assertions.*;\n\nimport org.junit.jupiter.api.Test;\n\n"
            f"class PairsTest {{\n{HELPERS}\n{tests}}}\n")


@pytest.mark.docker
def test_the_host_judges_each_check_as_junit_does(tmp_path):
    """Every pair run twice in the demo image: as written by JUnit, and blind (sender on the boot
    class path); the host's verdict on the blind run is JUnit's on the plain one, test by test."""
    text = _pairs_source()
    ids = [f"calc.PairsTest.p{n}()" for n in range(len(PAIRS))]
    blind = javablind.plan({"PairsTest.java": text}, ids, random.Random(7))
    assert len({c.test for c in blind.checks.values()}) == len(PAIRS) - 1  # all but the computed expected value
    for name, body in (("plain", text), ("blind", blind.files["PairsTest.java"])):
        (tmp_path / name / "calc").mkdir(parents=True)
        (tmp_path / name / "calc/PairsTest.java").write_text(body)
    (tmp_path / "sender/factoryblind").mkdir(parents=True)
    (tmp_path / "sender/factoryblind/Seen.java").write_text(javablind.SENDER_SOURCE)
    run = (f"javac -nowarn -d /tmp/{{0}} -cp {JUNIT} /w/{{0}}/calc/PairsTest.java && java -jar {JUNIT} --disable-banner "
           f"--details=none --class-path /tmp/{{0}} --select-class calc.PairsTest --reports-dir /w/{{0}}/report")
    script = (f"javac -d /tmp/sender /w/sender/factoryblind/Seen.java && {run.format('plain')}; "
              f"export FACTORY_BLIND_SEEN=/w/seen JAVA_TOOL_OPTIONS=-Xbootclasspath/a:/tmp/sender; {run.format('blind')}; true")
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", "--label", "factory.test=javablind",
                           "--user", str(os.getuid()), "-v", f"{tmp_path}:/w", IMAGE, "sh", "-c", script],
                          capture_output=True, text=True, timeout=600)
    reports = [(tmp_path / name / "report/TEST-junit-jupiter.xml") for name in ("plain", "blind")]
    assert all(r.exists() for r in reports), done.stdout + done.stderr
    plain, ran = (read("junit", r.read_text(), exit_code=None) for r in reports)
    judged, why, forged = javablind.judge(ran, blind, (tmp_path / "seen").read_bytes())
    assert forged is None
    verdicts = {test: (status_of(plain, test)[0] is TestStatus.passed, status_of(judged, test)[0] is TestStatus.passed)
                for test in ids}
    disagree = {PAIRS[ids.index(t)]: v for t, v in verdicts.items() if v[0] != v[1]}
    assert not disagree
    # both ways, and no blind test passed by the runner alone: a wrong value fails only on the host
    passed = sum(p for p, _ in verdicts.values())
    assert 20 < passed < len(PAIRS) - 20 and why


@pytest.mark.docker
@pytest.mark.parametrize("index", range(5))
def test_demo_gold_fix_passes_its_blind_checks_and_every_copy_fails(tmp_path, index):
    task = demo_tasks("demo-java")[index]
    work = gold_repo(tmp_path, "demo-java", task)
    copies = plant(work, COPY_WRITERS.get("java"), task, seed=index)
    files = {str(p.relative_to(work)): p.read_text() for p in (work / "src/test").rglob("*.java")}
    blind = javablind.planned(task, files, copies, random.Random(index))
    for path, text in blind.files.items():
        (work / path).write_text(text)
    (work / ".sender/factoryblind").mkdir(parents=True)
    (work / ".sender/factoryblind/Seen.java").write_text(javablind.SENDER_SOURCE)
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", "--label", "factory.test=javablind",
                           "--user", str(os.getuid()), "-v", f"{work}:/w", "-w", "/w", "-e", "REPORT_DIR=/w/.report", IMAGE,
                           "sh", "-c", "javac -d /tmp/sender .sender/factoryblind/Seen.java && "
                           "FACTORY_BLIND_SEEN=/w/.seen JAVA_TOOL_OPTIONS=-Xbootclasspath/a:/tmp/sender "
                           f"{task.tests.command}; cat .report/{task.tests.report}"],
                          capture_output=True, text=True, timeout=600)
    ran = read(task.tests.results, done.stdout, exit_code=None)
    judged, why, forged = javablind.judge(ran, blind, (work / ".seen").read_bytes() if (work / ".seen").exists() else b"")
    assert forged is None
    blinded = {c.test for c in blind.checks.values()}
    literal_checks = {copies.renamed[t] for t in task.FAIL_TO_PASS if "assertEquals(" in _body(files, copies.renamed[t])}
    assert literal_checks <= blinded
    assert {copies.renamed[t] for t in task.FAIL_TO_PASS} - blinded <= set(blind.readable)  # named in the verdict
    for test_id in [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]:
        assert status_of(judged, copies.renamed.get(test_id, test_id))[0] is TestStatus.passed, (test_id, why, done.stderr[-2000:])
    for copy in copies.copies:
        assert status_of(judged, copy)[0] is TestStatus.failed, copy


def test_no_plan_leaves_a_blind_hidden_tests_expected_value_in_its_line():
    """What `java-reads-expected-at-run-time` reads (`assertEquals(EXPECTED, eval("SOURCE"))`, a
    hidden test's line) is gone from every plan, original or twin; every hidden test with a
    literal check has one blind."""
    files = {f"src/test/java/calc/{p.name}": p.read_text() for p in DEMO_TESTS.glob("*.java")}
    for task in demo_tasks("demo-java"):
        for seed in range(40):
            copies = COPY_WRITERS.get("java").plan(files, list(task.FAIL_TO_PASS),
                                                    [*task.FAIL_TO_PASS, *task.PASS_TO_PASS], random.Random(seed))
            blind = javablind.planned(task, files, copies, random.Random(seed))
            for check_id, check in blind.checks.items():
                path, line = check.where.split(":")
                before = {**files, **copies.files}[path].splitlines()[int(line) - 1]
                after = blind.files[path].splitlines()[int(line) - 1]
                expected = before.split("(", 1)[1].split(",")[0]
                zero = javablind._ZEROS[check.expected.type]
                assert after == before.replace(f"assertEquals({expected}, ", f'__factoryEquals("{check_id}", {zero}, ')
            literal_checks = [t for t in task.FAIL_TO_PASS if "assertEquals(" in _body(files, t)]
            assert {copies.renamed[t] for t in literal_checks} <= {c.test for c in blind.checks.values()}


def _body(files: dict[str, str], test_id: str) -> str:
    whole = "\n".join(files.values())
    start = whole.index(f"void {test_id.rsplit('.', 1)[1].removesuffix('()')}()")
    return whole[start:whole.index("\n    }", start)]
