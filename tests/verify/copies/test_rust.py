"""The Rust writer: which assertions are sites, ids by module path, and, on the demo task set in
the Rust image, originals that pass and copies that fail under every gold fix."""

from __future__ import annotations

import random
import re

import pytest

import factory.verify.frameworks.copies  # noqa: F401  (registers the writers)
from factory.verify.frameworks.copies.base import COPY_WRITERS
from factory.verify.frameworks.copies.treesitter import parse
from tests.verify.copies.demo_runs import changed_at
from tests.verify.copies.realrun import check, demo_tasks, gold_repo, plant, run

RUST = COPY_WRITERS.get("rust")


def in_mod(body: str) -> str:
    return "pub fn add(a: u8, b: u8) -> u8 { a + b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n" + body + "}\n"


def plan(files: dict[str, str], f2p: list[str], ids: list[str] | None = None, seed: int = 1):
    return RUST.plan(files, f2p, ids if ids is not None else f2p, random.Random(seed))


def fns(text: str) -> dict[str, str]:
    return {m[1]: m[0].replace(m[1], "NAME", 1) for m in re.finditer(r"(?ms)^\s*fn (\w+)\(\).*?^    }", text)}


@pytest.mark.parametrize("assertion", [
    "assert_eq!(add(1, 2), 3);",
    'assert_eq!("naïve ünïcode", name(), "message {}", 1);',
    'assert_eq!(split("a,b"), vec!["a", "b"]);',
    'assert_eq!(parse(), &[b\'x\', b\'y\'][..2]);'.replace("[..2]", ""),
    'assert_eq!(pair(), (1, true, -2.5));',
    'assert_eq!(raw(), r#"a "quoted" {b}"#)',
    'let v = load()?;\n        assert_eq!(v, 250);',
])
def test_an_assert_eq_with_a_literal_side_gets_three_twins_at_one_literal_in_its_module(assertion):
    text = in_mod(f"    #[test]\n    fn adds_small() {{\n        {assertion}\n    }}\n")
    copies = plan({"src/lib.rs": text}, ["tests::adds_small"])
    # three twins, or as many as the file holds other strings to take (a string's twins are the file's own)
    assert not copies.uncopied and len(copies.copies) == (3 if '"' not in assertion.split(",")[0] + assertion[-12:] else
                                                          len(copies.copies)) and copies.copies
    assert set(copies.copies.values()) == {"tests::adds_small"}
    new = copies.renamed["tests::adds_small"]
    assert new.startswith("tests::") and all(c.startswith("tests::") for c in copies.copies)
    out = copies.files["src/lib.rs"]
    assert parse("rust", out) is not None and out.count("#[test]") == 1 + len(copies.copies)
    found = fns(out)
    assert len({found[c.removeprefix("tests::")] for c in copies.copies} | {found[new.removeprefix("tests::")]}) == 1 + len(copies.copies)
    at = {changed_at("rust", found[new.removeprefix("tests::")], found[c.removeprefix("tests::")]) for c in copies.copies}
    assert len(at) == 1 and len(next(iter(at))) == 1, at  # twins: all change the same literal
    for number in re.findall(r"\b25\d\b", out):
        assert int(number) < 256  # a u8 stays a u8


@pytest.mark.parametrize("assertion", [
    'assert_eq!(fields("a"), vec![row(&["a"])]);',  # a call of the crate's: its equality is the crate's
    "assert_eq!(err, Error::Unterminated { line: 2 });",
    "assert_ne!(add(1, 2), 4);",  # 4 changed to 6 still differs
    "assert_eq!(v, [0; 3]);",  # the length is the type
    "assert_eq!(add(1, 2), ONE + 2);",
    "assert!(add(1, 2) == 3);",
    "if quick() {\n            return;\n        }\n        assert_eq!(add(1, 2), 3);",
    "debug_assert_eq!(add(1, 2), 3);",
])
def test_an_assertion_a_changed_literal_may_still_pass_is_no_site(assertion):
    text = in_mod(f"    #[test]\n    fn adds_small() {{\n        {assertion}\n    }}\n")
    copies = plan({"src/lib.rs": text}, ["tests::adds_small"])
    assert copies.uncopied == ["tests::adds_small"] and not copies.copies
    assert set(copies.renamed) == {"tests::adds_small"}


KIND = ("#[derive(Debug, PartialEq)]\npub enum Kind {\n    /// `+`\n    Plus,\n    Minus,\n    Star,\n    Slash,\n"
        "    Number(u8),\n    Word { text: String },\n    #[cfg(feature = \"x\")]\n    Caret,\n}\n")


def variant_files(assertion: str, kind: str = KIND, head: str = "use lexer::lex::Kind;") -> dict[str, str]:
    test = f"{head}\n\n#[test]\nfn lexes_plus() {{\n    {assertion}\n}}\n"
    return {"src/lex.rs": kind, "tests/lex.rs": test}


@pytest.mark.parametrize("assertion", [
    'assert_eq!(next("+"), Kind::Plus);',
    'assert_eq!(&lexer::lex::Kind::Plus, &next("+"));',
    'assert!(next("+") == Kind::Plus);',
])
def test_an_expected_unit_variant_of_an_enum_of_the_repo_gets_twins_from_its_other_unit_variants(assertion):
    seen: set[str] = set()
    for seed in range(8):
        copies = plan(variant_files(assertion), ["lexes_plus"], seed=seed)
        assert not copies.uncopied and len(copies.copies) == 3
        found = fns(copies.files["tests/lex.rs"].replace("\n    ", "\n        ").replace("\n}", "\n    }"))
        twins = {re.search(r"Kind::(\w+)", found[c])[1] for c in copies.copies}
        assert len(twins) == 3 and "Plus" not in twins
        assert re.search(r"Kind::(\w+)", found[copies.renamed["lexes_plus"]])[1] == "Plus"
        seen |= twins
    # other unit variants only: a tuple or struct variant, or one under #[cfg], would not compile
    assert seen == {"Minus", "Star", "Slash"}


def test_an_expected_struct_variant_gets_twins_from_the_variants_with_its_fields():
    kind = KIND.replace("Word { text: String },", "Word { text: String },\n    Name { text: String },")
    copies = plan(variant_files('assert_eq!(next("a"), Kind::Word { text: "a".into() });', kind), ["lexes_plus"])
    assert not copies.uncopied and len(copies.copies) == 1
    assert copies.files["tests/lex.rs"].count('Kind::Name { text: "a".into() }') == 1


USE = "use lexer::lex::Kind;"


@pytest.mark.parametrize(("assertion", "kind", "head"), [
    ('assert_eq!(next("+"), Kind::Plus);', KIND.replace("enum Kind", "enum Token"), USE),  # not found
    ('assert_eq!(next("+"), Kind::Plus);', KIND + "\nmod other {\n    pub struct Kind;\n}\n", USE),  # two of the name
    ('assert_eq!(next("+"), Kind::Plus);', "pub enum Kind {\n    Plus,\n    Number(u8),\n}\n", USE),  # none of its shape
    ('assert_eq!(next("*"), Kind::Number(3));', KIND, USE),  # a tuple variant no other shares
    ("assert_eq!(next(Kind::Plus), Kind::Plus);", KIND, USE),  # the input too
    ("assert_eq!(Kind::Minus, Kind::Plus);", KIND, USE),  # two constants
    ('assert_ne!(next("+"), Kind::Plus);', KIND, USE),  # another variant may still differ
    ('assert!(next("+") == Kind::Plus || strict());', KIND, USE),  # the outcome is not the comparison's
    # the file's Ordering is std's, whatever the repo declares
    ('assert_eq!(next("+"), Ordering::Less);', KIND.replace("enum Kind", "enum Ordering").replace("Plus", "Less"),
     "use std::cmp::Ordering;"),
])
def test_a_variant_whose_enum_is_unsure_or_that_is_also_the_input_is_no_site(assertion, kind, head):
    copies = plan(variant_files(assertion, kind, head), ["lexes_plus"])
    assert copies.uncopied == ["lexes_plus"] and not copies.copies


@pytest.mark.parametrize("attributes", [
    "#[test]\n    #[ignore]",
    "#[rstest]\n    #[case(1)]",
])
def test_ignored_parameterized_and_snapshot_tests_are_uncopied(attributes):
    text = in_mod(f"    {attributes}\n    fn adds_small() {{\n        assert_eq!(add(1, 2), 3);\n    }}\n\n"
                  "    #[test]\n    fn snap() {\n        assert_eq!(add(1, 2), 3);\n"
                  "        insta::assert_snapshot!(add(1, 2).to_string());\n    }\n")
    copies = plan({"src/lib.rs": text}, ["tests::adds_small", "tests::snap"])
    assert copies.uncopied == ["tests::adds_small", "tests::snap"] and not copies.files


def test_a_should_panic_message_is_the_site_and_assertions_in_that_test_are_not():
    text = in_mod('    #[test]\n    #[should_panic(expected = "attempt to add with overflow")]\n    fn overflows() {\n'
                  "        assert_eq!(add(1, 2), 3);\n        add(255, 1);\n    }\n\n"
                  '    #[test]\n    #[should_panic]\n    fn panics() {\n        assert_eq!(add(1, 2), 3);\n    }\n')
    copies = plan({"src/lib.rs": text}, ["tests::overflows - should panic", "tests::panics"])
    assert copies.uncopied == ["tests::panics"]
    assert set(copies.copies.values()) == {"tests::overflows - should panic"}
    assert all(c.endswith(" - should panic") for c in copies.copies)
    out = copies.files["src/lib.rs"]
    assert out.count("assert_eq!(add(1, 2), 3)") == 5 and out.count("attempt to add with overflow") == 1


def test_ids_follow_the_module_path_of_the_file_and_its_inline_mods():
    body = "#[test]\nfn top() {\n    assert_eq!(one(), 1);\n}\n"
    nested = "mod inner {\n    mod deeper {\n        #[test]\n        fn deep() {\n            assert_eq!(one(), 1);\n        }\n    }\n}\n"
    files = {"src/parse/number.rs": body, "tests/cli.rs": body, "crates/x/src/lib.rs": nested,
             "src/parse/mod.rs": nested}
    copies = plan(files, ["parse::number::top", "inner::deeper::deep", "parse::inner::deeper::deep"])
    # `top` is in two targets' roots only once (tests/cli.rs is `top`), `inner::deeper::deep` in one crate
    assert copies.uncopied == []
    assert {o for o in copies.copies.values()} == {"parse::number::top", "inner::deeper::deep",
                                                    "parse::inner::deeper::deep"}
    assert copies.renamed["parse::number::top"].startswith("parse::number::")
    assert copies.renamed["inner::deeper::deep"].startswith("inner::deeper::")
    assert set(copies.files) == {"src/parse/number.rs", "crates/x/src/lib.rs", "src/parse/mod.rs"}


def test_a_file_the_grammar_cannot_read_is_left_alone():
    copies = plan({"tests/a.rs": "#[test]\nfn a() {\n    assert_eq!(one(), 1)\n"}, ["a"])
    assert copies.uncopied == ["a"] and not copies.files


def test_new_names_are_snake_case_and_collide_with_nothing():
    body = "".join(f"#[test]\nfn {w}_value() {{\n    assert_eq!(get(), {i});\n}}\n\n"
                   for i, w in enumerate(["case", "check", "result", "input", "output"]))
    helpers = "".join(f"fn {a}_{b}() {{}}\n" for a in ["case", "value", "check"] for b in ["case", "check", "result"])
    names = [f"{w}_value" for w in ["case", "check", "result", "input", "output"]]
    copies = plan({"tests/a.rs": body + helpers}, names)
    new = [*copies.copies, *copies.renamed.values()]
    assert not copies.uncopied and len(new) == len(set(new)) == 20
    assert not set(re.findall(r"\w+", body + helpers)) & set(new)
    assert all(re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", n) for n in new)


def test_the_needle_is_the_fn():
    assert RUST.needle("reader::tests::parses - should panic") == "fn parses("


@pytest.mark.docker
@pytest.mark.parametrize("task", demo_tasks("demo-rust"), ids=lambda t: t.instance_id)
def test_at_every_demo_gold_fix_originals_pass_and_copies_fail_in_cargo_test(tmp_path, task):
    work = gold_repo(tmp_path, "demo-rust", task)
    copies = plant(work, RUST, task, seed=7)
    results = run(work, "factory/rust:1", task.tests.command, task.tests.results, "rust")
    check(results, task, copies)
