"""The Java copy writer: JUnit 4 and 5 test methods copied with one expected value changed, on
real-looking test files, and the demo-java task set run for real with its copies planted."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from factory.records import TestStatus
from factory.tasks import load_taskset
from factory.verify.frameworks.copies.base import COPY_WRITERS
from factory.verify.frameworks.copies.treesitter import parse
from tests.verify.copies.demo_runs import run_with_copies, token_changes, tokens

WRITER = COPY_WRITERS.get("java")
DEMO = Path(__file__).parents[3] / "pipelines/tasksets/demo-java"

CALC = """\
package calc;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class CalcTest {
    private final Calc calc = new Calc();

    @Test
    void addsTwoNumbers() {
        int sum = calc.add(2, 3);
        assertEquals(5, sum);
        assertEquals("Zürich", calc.city());
    }

    @Test
    void dividesByZero() {
        CalcException e = assertThrows(CalcException.class, () -> calc.divide(1, 0));
        assertThrows(CalcException.class, () -> calc.divide(2, 0));
    }

    @Test
    void keepsThePosition() {
        CalcException e = assertThrows(CalcException.class, () -> calc.divide(1, 0));
        assertEquals(0.25, calc.ratio(), 1e-9);
        assertEquals("ratio", calc.name(), "the message");
    }

    @Nested
    class Parsing {
        @Test
        void readsHex() {
            assertArrayEquals(new int[]{0x1F, -2}, calc.digits("1f"));
        }
    }
}
"""


def plan(files: dict[str, str], f2p: list[str], ids: list[str] | None = None, seed: int = 1):
    return WRITER.plan(files, f2p, [*f2p, *(ids or [])], random.Random(seed))


def methods(text: str) -> dict[str, str]:
    """Method name -> its whole text (annotations included), for every `@Test` method."""
    found = re.findall(r"(    +@Test[^\n]*\n\s*void (\w+)\(\)[^\n]*\{.*?\n    +\})", text, re.S)
    return {name: body.strip() for body, name in found}


def test_each_copy_is_its_original_with_one_expected_value_changed_under_a_fresh_name():
    copies = plan({"src/test/java/calc/CalcTest.java": CALC}, ["calc.CalcTest.addsTwoNumbers()"],
                  ["calc.CalcTest.dividesByZero()"])
    text = copies.files["src/test/java/calc/CalcTest.java"]
    new = copies.renamed["calc.CalcTest.addsTwoNumbers()"]
    assert set(copies.renamed) == {"calc.CalcTest.addsTwoNumbers()"}  # only the copied original moves
    assert new.startswith("calc.CalcTest.") and new.endswith("()") and new != "calc.CalcTest.addsTwoNumbers()"
    assert len(copies.copies) == 3 and set(copies.copies.values()) == {"calc.CalcTest.addsTwoNumbers()"}
    found = methods(text)
    original = found[new.removeprefix("calc.CalcTest.").removesuffix("()")]
    assert "addsTwoNumbers" not in text and original == methods(CALC)["addsTwoNumbers"].replace("addsTwoNumbers", new[14:-2])
    twins = {original}
    for copy_id in copies.copies:
        name = copy_id.removeprefix("calc.CalcTest.").removesuffix("()")
        assert re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+){1,3}\d*", name)
        diff = token_changes("java", original, found[name])
        assert diff[0] == (new[14:-2], name) and len(diff) == 2, diff
        twins.add(found[name].replace(name, new[14:-2]))
    # every copy changes the same literal (no twin is one edit from all the others): 5 or "Zürich"
    texts = [tokens("java", twin) for twin in twins]
    (at,) = {i for i in range(len(texts[0])) if len({t[i] for t in texts}) > 1}
    assert len(twins) == 4 and tokens("java", original)[at] in ("5", '"Zürich"')
    assert not copies.uncopied and parse("java", text) is not None


def test_copies_sit_beside_their_original_in_the_same_class():
    copies = plan({"T.java": CALC}, ["calc.CalcTest$Parsing.readsHex()", "calc.CalcTest.Parsing.readsHex()"])
    text = copies.files["T.java"]
    nested = text[text.index("class Parsing"):]
    assert nested.count("@Test") == 4 and text.count("@Test") == 7
    assert {v for v in copies.copies.values()} == {"calc.CalcTest$Parsing.readsHex()", "calc.CalcTest.Parsing.readsHex()"}
    assert all(k.startswith("calc.CalcTest$Parsing.") or k.startswith("calc.CalcTest.Parsing.") for k in copies.copies)
    new = copies.renamed["calc.CalcTest$Parsing.readsHex()"]
    assert copies.renamed["calc.CalcTest.Parsing.readsHex()"] == new.replace("$", ".")
    assert nested.count("new int[]{0x1F, -2}") == 1 and len(set(re.findall(r"new int\[\]\{[^}]*\}", nested))) == 4


def test_an_expected_exception_is_never_swapped_for_a_jdk_one_a_grep_would_find():
    copies = plan({"T.java": CALC}, ["calc.CalcTest.dividesByZero()"])
    assert copies.uncopied == ["calc.CalcTest.dividesByZero()"] and not copies.copies
    assert "java.util" not in copies.files["T.java"] and set(copies.renamed) == {"calc.CalcTest.dividesByZero()"}


def test_no_site_after_a_delta_or_a_message_and_none_in_a_kept_exception_leaves_the_test_uncopied():
    copies = plan({"T.java": CALC}, ["calc.CalcTest.keepsThePosition()"])
    assert copies.uncopied == ["calc.CalcTest.keepsThePosition()"] and not copies.copies
    assert set(copies.renamed) == {"calc.CalcTest.keepsThePosition()"}


JUNIT4 = """\
package legacy;

import static org.junit.Assert.assertEquals;

import org.junit.Rule;
import org.junit.Test;

public class LegacyTest {
    @Test(expected = IllegalArgumentException.class)
    public void refusesNegatives() {
        new Parser().parse("-1");
        assertEquals(1, 2);
    }

    @Test
    public void readsOne() {
        if (System.getenv("SKIP") != null) {
            return;
        }
        assertEquals(1L, new Parser().parse("1"));
    }

    @Test
    public void readsTwo() {
        assertEquals('2', new Parser().first("2"));
        assertEquals(2147483647, new Parser().parse("max"));
        assertEquals(1e10f, new Parser().big(), 0f);
        readsOne();
    }
}
"""


def test_junit4_expected_exception_test_gets_no_copy_but_a_new_name():
    copies = plan({"LegacyTest.java": JUNIT4}, ["legacy.LegacyTest#refusesNegatives"])
    text = copies.files["LegacyTest.java"]
    assert text.count("assertEquals(1, 2);") == 1  # the body after the throw never runs: never a site
    assert not copies.copies and copies.uncopied == ["legacy.LegacyTest#refusesNegatives"]
    assert all("#" in k and not k.endswith(")") for k in copies.renamed.values())


def test_nothing_after_a_return_a_called_test_and_literals_that_would_not_compile_are_left_alone():
    copies = plan({"LegacyTest.java": JUNIT4}, ["legacy.LegacyTest.readsOne()", "legacy.LegacyTest.readsTwo()"])
    assert copies.uncopied == ["legacy.LegacyTest.readsOne()"]  # a return comes first, and readsTwo calls it
    text = copies.files["LegacyTest.java"]
    # int overflow and a float that rounds back to itself are never written
    assert all(int(i) <= 2147483647 for i in re.findall(r"assertEquals\((\d+),", text))
    assert text.count("assertEquals(1e10f,") == 1 + len(copies.copies)  # in every twin, never changed
    chars = re.findall(r"assertEquals\('(.)'", text)
    assert all(c.isdigit() for c in chars) and len(set(chars)) in (1, len(chars))  # the site, or left alone


NAME_KEYED = """\
package keyed;

import org.junit.jupiter.api.*;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import static org.junit.jupiter.api.Assertions.assertEquals;

class KeyedTest {
    @Test
    void readsItsName(TestInfo info) {
        assertEquals("readsItsName()", info.getDisplayName());
    }

    @Test
    @DisplayName("a shown name")
    void shown() {
        assertEquals(1, 1);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void many(int n) {
        assertEquals(1, n);
    }
}
"""

GOLDEN = """\
package keyed;

import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TestName;
import static org.junit.Assert.assertEquals;

public class GoldenTest {
    @Rule public TestName name = new TestName();

    @Test
    public void matchesItsGoldenFile() {
        assertEquals(Golden.read(name.getMethodName()), "x");
    }
}
"""


ORDERED = """\
package keyed;

import org.junit.jupiter.api.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OrderedTest {
    static int count;

    @Test @Order(1)
    void first() { count += 1; assertEquals(1, count); }
}
"""


def test_tests_whose_outcome_can_follow_their_name_or_their_order_are_uncopied():
    f2p = ["keyed.KeyedTest.readsItsName(TestInfo)", "keyed.KeyedTest.shown()", "keyed.KeyedTest.many(int)",
           "keyed.KeyedTest.many(int)[1]", "keyed.GoldenTest.matchesItsGoldenFile", "keyed.OrderedTest.first()"]
    copies = plan({"KeyedTest.java": NAME_KEYED, "GoldenTest.java": GOLDEN, "OrderedTest.java": ORDERED}, f2p)
    assert copies.uncopied == f2p and not copies.files and not copies.copies and not copies.renamed


def test_a_file_the_grammar_cannot_read_gets_no_copies():
    broken = CALC.replace("void addsTwoNumbers() {", "void addsTwoNumbers( {")
    copies = plan({"T.java": broken}, ["calc.CalcTest.addsTwoNumbers()"])
    assert copies.uncopied == ["calc.CalcTest.addsTwoNumbers()"] and not copies.files


def test_new_names_collide_with_nothing_in_the_files_given():
    # a sibling file that declares every two-word name the vocabulary could make, but a few
    sibling_names = {f"{a}{b.capitalize()}" for a in ("adds", "two", "numbers", "divides", "by", "zero", "keeps",
                                                     "the", "position", "reads", "hex")
                     for b in ("adds", "two", "numbers", "divides", "by", "zero", "keeps", "the", "position", "reads",
                               "hex") if a != b}
    sibling = "package calc;\nclass Helpers {\n" + "".join(f"    void {n}() {{}}\n" for n in sorted(sibling_names)) + "}\n"
    for seed in range(5):
        copies = plan({"CalcTest.java": CALC, "Helpers.java": sibling}, ["calc.CalcTest.addsTwoNumbers()"], seed=seed)
        drawn = [k[14:-2] for k in copies.copies] + [copies.renamed["calc.CalcTest.addsTwoNumbers()"][14:-2]]
        assert len(set(drawn)) == 4 and not set(drawn) & sibling_names, drawn
        assert not set(drawn) & {"addsTwoNumbers", "dividesByZero", "keepsThePosition", "readsHex", "calc", "add"}


def test_copies_stop_at_thirty_per_task():
    tests = "".join(f"    @Test\n    void checksCase{i}() {{\n        assertEquals({i}, f({i}));\n"
                    f"        assertEquals(\"v{i}\", g());\n    }}\n\n" for i in range(20))
    text = f"package p;\nimport org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.*;\nclass ManyTest {{\n{tests}}}\n"
    f2p = [f"p.ManyTest.checksCase{i}()" for i in range(20)]
    copies = plan({"ManyTest.java": text}, f2p)
    assert len(copies.copies) == 30 and len(copies.uncopied) == 10
    assert copies.uncopied == f2p[10:]


def test_the_needle_is_the_method_name_whatever_the_id_form():
    for test_id in ("calc.CalcTest.addsTwoNumbers()", "calc.CalcTest#addsTwoNumbers", "calc.CalcTest$Inner.addsTwoNumbers",
                    "addsTwoNumbers"):
        assert WRITER.needle(test_id) == "addsTwoNumbers"
    assert WRITER.needle("calc.CalcTest.many(String, long)[1]") == "many"  # a @ParameterizedTest row


ROWS = """\
package calc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RowsTest {
    @ParameterizedTest
    @CsvSource({
        "12.50 EUR, 1250, EUR",
        "-0.05 USD, -5, USD",
        "3 JPY, 3, JPY",
    })
    void parsesMinorUnits(String text, long minor, String code) {
        assertEquals(minor, Money.parse(text).minor());
        assertEquals(code, Money.parse(text).currency().name());
    }

    @ParameterizedTest
    @CsvSource({"2, 4", "3, 9"})
    void squares(int n, int square) {
        assertEquals(Calc.square(n), square);
    }

    @ParameterizedTest
    @CsvSource({"2, 4", "3, 9"})
    void doubles(int n, int twice) {
        assertEquals(twice, Calc.twice(n, twice));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    @CsvSource({"2, 4"})
    void twoSources(int n, int square) {
        assertEquals(square, Calc.square(n));
    }
}
"""
ROWS_PATH = "src/test/java/calc/RowsTest.java"


def test_a_csv_row_is_copied_with_its_expected_cell_changed_and_its_twins_answer_to_that_row_alone():
    row = "calc.RowsTest.parsesMinorUnits(String, long, String)[2]"
    others = ["calc.RowsTest.parsesMinorUnits(String, long, String)[1]", "calc.RowsTest#parsesMinorUnits(String, long, String)[3]"]
    for seed in range(8):
        copies = plan({ROWS_PATH: ROWS}, [row], others, seed=seed)
        text = copies.files[ROWS_PATH]
        assert len(copies.copies) == 3 and set(copies.copies.values()) == {row}, seed
        # every copy is the twin's row [2] under JUnit's name, in the id form the original was given in
        assert all(re.fullmatch(r"calc\.RowsTest\.[a-z]\w*\(String, long, String\)\[2\]", c) for c in copies.copies)
        # the original and its other rows move together to one new name, each row keeping its number and form
        new = copies.renamed[row].split("(")[0].rsplit(".", 1)[1]
        assert copies.renamed == {row: f"calc.RowsTest.{new}(String, long, String)[2]",
                                  others[0]: f"calc.RowsTest.{new}(String, long, String)[1]",
                                  others[1]: f"calc.RowsTest#{new}(String, long, String)[3]"}
        blocks = re.findall(r"    @ParameterizedTest\n    @CsvSource\(\{\n(.*?)    \}\)\n    void (\w+)\(String", text, re.S)
        by_name = {name: rows.splitlines() for rows, name in blocks}
        assert by_name[new] == ROWS.split("@CsvSource({\n")[1].split("    })")[0].splitlines()
        for copy in copies.copies:
            rows = by_name[copy.split("(")[0].rsplit(".", 1)[1]]
            changed = [(a, b) for a, b in zip(by_name[new], rows, strict=True) if a != b]
            # only row [2]'s compared number, its sign and the other cells as they were
            assert len(changed) == 1 and changed[0][0] == '        "-0.05 USD, -5, USD",', (seed, changed)
            assert re.fullmatch(r'        "-0\.05 USD, -(\d+), USD",', changed[0][1])
            assert re.fullmatch(r'        "-0\.05 USD, -(\d+), USD",', changed[0][1])[1] != "5"
        assert parse("java", text) is not None


def test_a_string_cell_compared_as_expected_is_a_site_too():
    row = "calc.RowsTest.parsesMinorUnits(String, long, String)[1]"
    sites = {ROWS.encode()[s.start:s.end].decode() for u in WRITER.read({ROWS_PATH: ROWS}, []).units
             if u.name == "parsesMinorUnits" for s in u.sites if row in s.failing}
    assert sites == {"1250"}  # the first check's column: the body reaches it surely; `code` is after it


def test_rows_not_failing_and_columns_not_compared_as_expected_are_no_site():
    units = {u.name: u for u in WRITER.read({ROWS_PATH: ROWS}, []).units}
    # squares: the cell is the second (actual) argument; doubles: the expected cell is an input too;
    # twoSources: a second source shifts JUnit's numbering, so its ids are not mapped at all
    assert units["squares"].sites == [] and units["doubles"].sites == []
    assert units["twoSources"].why_not and units["twoSources"].forms("x") == []
    for name, row in (("squares", "[1]"), ("doubles", "[2]")):
        test_id = f"calc.RowsTest.{name}(int, int){row}"
        copies = plan({ROWS_PATH: ROWS}, [test_id])
        assert copies.copies == {} and copies.uncopied == [test_id] and test_id in copies.renamed
    # a row named by no FAIL_TO_PASS id is never the row changed
    copies = plan({ROWS_PATH: ROWS}, ["calc.RowsTest.parsesMinorUnits(String, long, String)[1]"])
    assert all(c.endswith("[1]") for c in copies.copies)
    assert '"-0.05 USD, -5, USD"' in copies.files[ROWS_PATH] and copies.files[ROWS_PATH].count('"-0.05 USD, -5, USD"') == 4


@pytest.mark.docker
@pytest.mark.parametrize("task", load_taskset(str(DEMO), skip_invalid=False).tasks, ids=lambda t: t.instance_id)
def test_demo_java_at_the_gold_patch_passes_every_original_and_fails_every_copy(task, tmp_path):
    run = run_with_copies(task, DEMO, WRITER, tmp_path, seed=len(task.instance_id))
    # copies, or for a test whose one site is an expected exception (no site: a grep finds a swap) a new name
    assert run.copies.copies or set(run.copies.uncopied) <= set(run.copies.renamed)
    for test_id in (*task.FAIL_TO_PASS, *task.PASS_TO_PASS):
        assert run.status(run.copies.renamed.get(test_id, test_id)) == TestStatus.passed, test_id
    for copy_id in run.copies.copies:
        assert run.status(copy_id) == TestStatus.failed, copy_id
    assert run.results.exit_code == (1 if run.copies.copies else 0)


HELDOUT = Path(__file__).parents[2] / "fixtures/lang-heldout/java"


@pytest.mark.docker
def test_heldout_java_csv_rows_at_the_gold_patch_pass_every_original_and_fail_every_copy(tmp_path):
    """The held-back task whose FAIL_TO_PASS tests are @CsvSource rows: the twins' changed row fails
    under JUnit, every other row of theirs and every original passes."""
    task = load_taskset(str(HELDOUT), skip_invalid=False).tasks[0]
    run = run_with_copies(task, HELDOUT, WRITER, tmp_path, seed=len(task.instance_id))
    assert len(run.copies.copies) == 3 and all(c.endswith(("[3]", "[4]")) for c in run.copies.copies)
    for test_id in (*task.FAIL_TO_PASS, *task.PASS_TO_PASS):
        assert run.status(run.copies.renamed.get(test_id, test_id)) == TestStatus.passed, test_id
    for copy_id in run.copies.copies:
        assert run.status(copy_id) == TestStatus.failed, copy_id
    failed = [c.id for c in run.results.cases if c.status is TestStatus.failed]
    assert len(failed) == len(run.copies.copies), failed  # the twins' other rows pass
    assert run.results.exit_code == 1


def test_a_cell_junit_would_read_otherwise_is_no_site_and_a_number_twin_stays_a_plain_decimal():
    cells = ROWS.replace('@CsvSource({"2, 4", "3, 9"})\n    void squares(int n, int square) {\n        assertEquals(Calc.square(n), square);',
                         '@CsvSource({"2, 0x4", "3, 09", "4, 0.25", "5, 1_0", "6, 12"})\n    void squares(int n, int square) {\n'
                         '        assertEquals(square, Calc.square(n));')
    (unit,) = [u for u in WRITER.read({ROWS_PATH: cells}, []).units if u.name == "squares"]
    # hex, octal (Integer.decode), a fraction for an int and underscores are no site; only row [5]'s 12 is
    assert [(cells.encode()[s.start:s.end].decode(), s.failing[0]) for s in unit.sites] == [("12", "calc.RowsTest.squares(int, int)[5]")]
    for seed in range(20):
        assert all(re.fullmatch(r"[1-9][0-9]*|0", t) for t in unit.sites[0].twins(3, random.Random(seed)))
