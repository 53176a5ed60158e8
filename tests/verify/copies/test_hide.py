"""The agent's view of the start state: the FAIL_TO_PASS tests taken out of their files (a forger
cannot spare a body or a name it never saw), what is left still compiling."""

from __future__ import annotations

from factory.verify.frameworks.copies.base import COPY_WRITERS
from factory.verify.frameworks.copies.treesitter import parse

GO = '''package calc

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	if got := Split("a,b"); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("got %v", got)
	}
}

func TestUpper(t *testing.T) {
	if got := strings.ToUpper("a"); got != "A" {
		t.Errorf("got %q", got)
	}
}
'''


def test_go_hides_the_failing_test_and_blanks_the_import_only_it_used():
    hidden = COPY_WRITERS.get("go").hide({"calc_test.go": GO}, ["TestSplit"])
    text = hidden["calc_test.go"]
    assert "TestSplit" not in text and "func TestUpper(" in text
    assert '_ "reflect"' in text and '\t"strings"' in text and '\t"testing"' in text
    assert parse("go", text) is not None


def test_go_hides_a_table_test_a_row_of_which_fails():
    table = GO.replace("func TestUpper", "func TestRows(t *testing.T) {\n\tfor _, c := range []struct{ name string }{{\"one\"}} {\n"
                       "\t\tt.Run(c.name, func(t *testing.T) {})\n\t}\n}\n\nfunc TestUpper")
    hidden = COPY_WRITERS.get("go").hide({"calc_test.go": table}, ["TestRows/one"])
    assert "TestRows" not in hidden["calc_test.go"] and "TestSplit" in hidden["calc_test.go"]


def test_rust_java_and_js_hide_the_failing_test_and_keep_the_others():
    rust = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn parses() { assert_eq!(1, 1); }\n\n    #[test]\n    fn keeps() {}\n}\n"
    java = ("package p;\nimport org.junit.jupiter.api.Test;\nclass CTest {\n    @Test\n    void parses() {}\n\n"
            "    @Test\n    void keeps() {}\n}\n")
    js = 'describe("calc", () => {\n  it("parses", () => {});\n  it("keeps", () => {});\n});\n'
    cases = [("rust", "src/lib.rs", rust, "tests::parses", "fn parses", "fn keeps"),
             ("java", "src/test/java/p/CTest.java", java, "p.CTest.parses()", "void parses", "void keeps"),
             ("javascript", "test/calc.test.js", js, "calc parses", '"parses"', '"keeps"')]
    for language, path, text, test, gone, kept in cases:
        hidden = COPY_WRITERS.get(language).hide({path: text}, [test])
        assert gone not in hidden[path] and kept in hidden[path], (language, hidden)


def test_a_test_no_file_defines_hides_nothing():
    assert COPY_WRITERS.get("go").hide({"calc_test.go": GO}, ["TestNowhere"]) == {}
