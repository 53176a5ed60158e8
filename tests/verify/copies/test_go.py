"""The Go writer: which checks are sites, the ids its copies and renames map, and, on the demo
task set in the Go image, originals that pass and copies that fail under every gold fix."""

from __future__ import annotations

import random
import re

import pytest

import factory.verify.frameworks.copies  # noqa: F401  (registers the writers)
from factory.verify.frameworks.copies.base import COPY_WRITERS
from factory.verify.frameworks.copies.treesitter import parse
from tests.verify.copies.demo_runs import changed_at
from tests.verify.copies.realrun import check, demo_tasks, gold_repo, plant, run

GO = COPY_WRITERS.get("go")
HEAD = 'package calc\n\nimport (\n\t"reflect"\n\t"testing"\n\n\t"github.com/stretchr/testify/assert"\n)\n\n'


def plan(body: str, f2p: list[str], ids: list[str] | None = None, seed: int = 1, path: str = "calc_test.go"):
    return GO.plan({path: HEAD + body}, f2p, ids if ids is not None else f2p, random.Random(seed))


def funcs(text: str) -> dict[str, str]:
    """Top-level test funcs by name -> their text with the name taken out."""
    return {m[1]: m[0].replace(m[1], "NAME", 1) for m in re.finditer(r"(?ms)^func (Test\w*)\(.*?^}", text)}


@pytest.mark.parametrize("check_text", [
    'if got := Add(1, 2); got != 3 {\n\t\tt.Errorf("got %d", got)\n\t}',
    'if got := Add(1, 2); 3 != got {\n\t\tt.Fatalf("got %d", got)\n\t}',
    'got, ok := Lookup("a")\n\tif !ok || got != "alpha" {\n\t\tt.Fatal("no")\n\t}',
    'if got := Split("a,b"); !reflect.DeepEqual(got, []string{"a", "b"}) {\n\t\tt.Error(got)\n\t}',
    'assert.Equal(t, 3, Add(1, 2))',
    'if got, want := Add(1, 2), 3; got != want {\n\t\tt.Errorf("got %d", got)\n\t}',
    'want := Point{X: 1, Y: -2}\n\tif got := Origin(); got != want {\n\t\tt.Error(got)\n\t}',
])
def test_an_equality_check_at_the_top_of_a_test_gets_three_twins_at_one_literal(check_text):
    copies = plan(f"func TestAdd(t *testing.T) {{\n\t{check_text}\n}}\n", ["TestAdd"])
    assert not copies.uncopied and len(copies.copies) == 3
    assert set(copies.copies.values()) == {"TestAdd"}
    (text,) = copies.files.values()
    assert parse("go", text) is not None
    found = funcs(text)
    new = copies.renamed["TestAdd"]
    assert set(found) == {new, *copies.copies} and "TestAdd" not in found
    at = {changed_at("go", found[new], found[copy]) for copy in copies.copies}
    assert len(at) == 1 and len(next(iter(at))) == 1, at  # twins: all change the same literal
    assert len({found[c] for c in copies.copies}) == 3  # to three different values


@pytest.mark.parametrize("check_text", [
    'if got := Add(1, 2); got == 4 {\n\t\tt.Error(got)\n\t}',  # a change of 4 still passes
    'if got := Add(1, 2); got != 3 {\n\t\tt.Log(got)\n\t}',  # logs, never fails
    'if got := Add(1, 2); got != 3 && strict {\n\t\tt.Error(got)\n\t}',
    'if testing.Short() {\n\t\treturn\n\t}\n\tif got := Add(1, 2); got != 3 {\n\t\tt.Error(got)\n\t}',
    'if testing.Short() {\n\t\tt.Skip("short")\n\t}\n\tassert.Equal(t, 3, Add(1, 2))',
    'assert.NotEqual(t, 4, Add(1, 2))',
    'want := 3\n\twant++\n\tif got := Add(1, 2); got != want {\n\t\tt.Error(got)\n\t}',
    'for _, n := range []int{3} {\n\t\tif Add(1, 2) != n {\n\t\t\tt.Error(n)\n\t\t}\n\t}',
    'if got := Add(1, 2); got != three {\n\t\tt.Error(got)\n\t}',
    'if got := Add(1, 2); got != 3 {\n\t\treturn\n\t\tt.Error(got)\n\t}',
    'assert.Equal(t, int64(3), Add(1, 2))',
])
def test_a_check_that_a_changed_literal_may_still_pass_or_never_reach_is_no_site(check_text):
    copies = plan(f"func TestAdd(t *testing.T) {{\n\t{check_text}\n}}\n", ["TestAdd"])
    assert copies.uncopied == ["TestAdd"] and not copies.copies
    assert set(copies.renamed) == {"TestAdd"}  # renamed all the same: no name a forger knows is left


TABLE = '''func TestBump(t *testing.T) {
	cases := []struct {
		name, in, kind string
		want           string
		major          bool
	}{
		{"patch", "1.2.3", "patch", "1.2.4", false},
		{"minor of patch pre", "1.2.4-rc.1", "minor", "1.3.0", false},
		{name: "naïve ünïcode", in: "2.0.0", kind: "major", want: "3.0.0", major: true},
		{"dup", "1.0.0", "patch", "1.0.1", false},
		{"dup", "1.0.1", "patch", "1.0.2", false},
		{"no want", "1.0.0", "none", lookup("x"), big},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			got, err := Bump(c.in, c.kind)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want || IsMajor(c.kind) != c.major {
				t.Errorf("Bump(%s, %s) = %s, want %s", c.in, c.kind, got, c.want)
			}
		})
	}
}
'''
TABLE_IDS = ["TestBump", "TestBump/patch", "TestBump/minor_of_patch_pre", "TestBump/naïve_ünïcode",
             "TestBump/dup", "TestBump/dup#01", "TestBump/no_want"]


@pytest.mark.parametrize("row", ["minor_of_patch_pre", "naïve_ünïcode"])
def test_a_table_row_gets_copies_that_fail_that_row_and_its_test_and_no_other_row(row):
    copies = plan(TABLE, ["TestBump/" + row, "TestBump"], TABLE_IDS)
    assert not copies.uncopied
    (text,) = copies.files.values()
    assert parse("go", text) is not None and "naïve ünïcode" in text
    new = copies.renamed["TestBump"]
    assert copies.renamed == {i: new + i.removeprefix("TestBump") for i in TABLE_IDS}  # every row moves too
    tops = {c for c in copies.copies if "/" not in c}
    assert len(tops) == 3 and all(copies.copies[c] == "TestBump" for c in tops)
    rows = {c: o for c, o in copies.copies.items() if "/" in c}
    assert {c.partition("/")[0] for c in rows} == tops and set(rows.values()) == {f"TestBump/{row}"}
    for copy in rows:  # the mapped row is the one whose literal changed
        assert copy.partition("/")[2] == row
    at = {changed_at("go", funcs(text)[new], funcs(text)[top]) for top in tops}
    assert len(at) == 1 and len(next(iter(at))) == 1  # twins: all change that row's literal
    assert len({funcs(text)[top] for top in tops}) == 3


def test_a_row_whose_name_go_numbers_or_whose_want_is_no_literal_is_uncopied():
    copies = plan(TABLE, ["TestBump/dup#01", "TestBump/no_want"], TABLE_IDS)
    assert copies.uncopied == ["TestBump/dup#01", "TestBump/no_want"] and not copies.copies


MAP_TABLE = '''func TestParse(t *testing.T) {
	tests := map[string]struct {
		in   string
		want int
	}{
		"one":      {in: "I", want: 1},
		"two\\tx":   {in: "II", want: 2},
		`raw name`: {in: "III", want: 3},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, Parse(tc.in))
		})
	}
}
'''


def test_a_map_table_keys_its_rows_by_their_map_key():
    copies = plan(MAP_TABLE, ["TestParse/raw_name", "TestParse/two\tx"], ["TestParse/one", "TestParse/raw_name"])
    assert copies.uncopied == ["TestParse/two\tx"]  # an escaped name: not worth a wrong id
    assert {o for o in copies.copies.values()} == {"TestParse/raw_name"}
    assert all(c.endswith("/raw_name") for c in copies.copies)


def test_a_test_that_reads_its_own_name_or_a_golden_file_keeps_its_name_and_gets_no_copies():
    body = ('func TestA(t *testing.T) {\n\tif got := Add(1, 2); got != 3 {\n\t\tt.Error(t.Name())\n\t}\n}\n\n'
            'func TestB(t *testing.T) {\n\tgolden := filepath.Join("testdata", "b.golden")\n'
            '\tif got := Read(golden); got != "b" {\n\t\tt.Error(got)\n\t}\n}\n')
    copies = plan(body, ["TestA", "TestB"])
    assert copies.uncopied == ["TestA", "TestB"] and not copies.renamed and not copies.files


def test_a_file_the_grammar_cannot_read_is_left_alone():
    copies = plan("func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 { t.Error() \n}\n", ["TestAdd"])
    assert copies.uncopied == ["TestAdd"] and not copies.files


def test_new_names_collide_with_nothing_in_the_package_folder():
    body = "".join(f"func Test{w}Value(t *testing.T) {{\n\tif Get() != {i} {{\n\t\tt.Error()\n\t}}\n}}\n\n"
                   for i, w in enumerate(["Case", "Check", "Result", "Input", "Output"]))
    other = HEAD + "".join(f"func Test{a}{b}(t *testing.T) {{}}\n" for a in ["Case", "Value", "Check", "Result"]
                           for b in ["Case", "Check", "Result", "Input", "Output"])
    names = [f"Test{w}Value" for w in ["Case", "Check", "Result", "Input", "Output"]]
    copies = GO.plan({"calc_test.go": HEAD + body, "more_test.go": other}, names, names, random.Random(4))
    assert not copies.uncopied and set(copies.files) == {"calc_test.go"}
    before = set(re.findall(r"\w+", HEAD + body + other))
    new = [*copies.copies, *copies.renamed.values()]
    assert len(new) == len(set(new)) == 20 and not before & set(new)
    assert all(re.fullmatch(r"Test[A-Z]\w*", n) for n in new)


def test_no_twin_of_a_test_is_named_with_the_words_of_its_old_name():
    """A forger that knows `TestParse` from the start state and flips failures of names starting
    with it must find nothing: the original's new name is drawn as its copies' are, without
    `parse`, so a prefix, a word or a substring of the old name tells no twin from another."""
    body = "".join(f"func Test{w}(t *testing.T) {{\n\tif Get() != {i} {{\n\t\tt.Error()\n\t}}\n}}\n\n"
                   for i, w in enumerate(["Parse", "ParseSplit", "RejectsSplit", "FormatValue", "RoundCents"]))
    for seed in range(40):
        copies = GO.plan({"calc_test.go": HEAD + body}, ["TestParse"], ["TestParse"], random.Random(seed))
        twins = [*copies.copies, copies.renamed["TestParse"]]
        assert len(twins) == 4 and not [t for t in twins if "parse" in t.lower()], (seed, twins)


def test_copies_of_a_task_stop_at_thirty():
    body = "".join(f"func TestAdd{i}(t *testing.T) {{\n\tif Add({i + 20}, 1) != {i + 21} {{\n\t\tt.Error()\n\t}}\n}}\n\n"
                   for i in range(12))
    names = [f"TestAdd{i}" for i in range(12)]
    copies = plan(body, names, names)
    assert len(copies.copies) == 30 and copies.uncopied == names[10:]


def test_an_id_that_two_packages_define_is_no_ones():
    text = HEAD + "func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Error()\n\t}\n}\n"
    copies = GO.plan({"a/calc_test.go": text, "b/calc_test.go": text}, ["TestAdd"], ["TestAdd"], random.Random(1))
    assert copies.uncopied == ["TestAdd"] and not copies.files


def test_the_needle_is_the_top_level_func():
    assert GO.needle("TestParse/v_prefix") == "func TestParse("
    assert GO.needle("ExampleParse") is None


@pytest.mark.docker
@pytest.mark.parametrize("task", demo_tasks("demo-go"), ids=lambda t: t.instance_id)
def test_at_every_demo_gold_fix_originals_pass_and_copies_fail_in_go_test(tmp_path, task):
    work = gold_repo(tmp_path, "demo-go", task)
    copies = plant(work, GO, task, seed=7)
    results = run(work, "factory/go:1", task.tests.command, task.tests.results, "go")
    check(results, task, copies)
