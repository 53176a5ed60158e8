"""The JavaScript/TypeScript copy writer: `it`/`test` calls copied with one expected value
changed, on real-looking jest, mocha and vitest files, and the demo-js task set run for real
(mocha) with its copies planted."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from factory.records import TestStatus
from factory.tasks import load_taskset
from factory.verify.frameworks.copies.base import COPY_WRITERS
from factory.verify.frameworks.copies.treesitter import parse
from tests.verify.copies.demo_runs import run_with_copies, token_changes

WRITER = COPY_WRITERS.get("javascript")
DEMO = Path(__file__).parents[3] / "pipelines/tasksets/demo-js"

JEST = """\
const { slug, parse } = require('../src');

describe('slug', () => {
  describe('ascii', () => {
    it('lowers and joins words', () => {
      expect(slug('Hello World')).toBe('hello-world');
      expect(slug('A  B').length).toEqual(3);
    });

    test("keeps digits", async function () {
      await expect(slug('v2')).toStrictEqual({ text: 'v2', parts: [1, true] });
    });
  });

  it(`décode les accents`, () => {
    expect(slug('Été à Zürich')).toBe('ete-a-zurich');
    expect(() => slug(null)).toThrow('not a string');
  });

  it('never equals the input', () => {
    expect(slug('x')).not.toBe('x');
    expect(slug('y')).toBe(expect.anything());
    expect(slug('z')).toEqual({ ...base, z: 1 });
    expect(slug('w')).toEqual({ w: 1, w: 2 });
  });
});
"""


def plan(files: dict[str, str], f2p: list[str], ids: list[str] | None = None, seed: int = 1):
    return WRITER.plan(files, f2p, [*f2p, *(ids or [])], random.Random(seed))


def calls(text: str) -> dict[str, str]:
    """A test's title -> its whole `it(...)`/`test(...)` statement, indented as in the file."""
    return {m[2]: m[0] for m in re.finditer(r"(?ms)^ *(?:it|test)\((['\"`])(.*?)\1, .*?^ *\}\);$", text)}


def test_each_copy_is_its_original_with_one_expected_value_changed_in_the_same_describe():
    f2p = ["slug › ascii › lowers and joins words"]
    copies = plan({"test/slug.test.js": JEST}, f2p, ["slug › ascii › keeps digits"])
    text = copies.files["test/slug.test.js"]
    new = copies.renamed[f2p[0]]
    assert set(copies.renamed) == set(f2p) and new.startswith("slug › ascii › ")
    assert len(copies.copies) == 3 and set(copies.copies.values()) == set(f2p)
    found = calls(text)
    title = new.removeprefix("slug › ascii › ")
    assert re.fullmatch(r"[a-z]+( [a-z]+){1,2}( \d+)?", title) and "lowers and joins words" not in text
    ascii_block = text[text.index("describe('ascii'"):text.index("  it(`décode")]
    changed = set()
    for copy_id in copies.copies:
        name = copy_id.removeprefix("slug › ascii › ")
        assert found[name] in ascii_block  # in the same describe block
        diff = token_changes("javascript", found[title], found[name])
        assert diff[0] == (f"'{title}'", f"'{name}'") and len(diff) == 2, diff
        changed.add(diff[1])
    # one literal, three values: 'hello-world' or 3
    assert len(changed) == 3 and len({old for old, _ in changed}) == 1 and changed.pop()[0] in ("'hello-world'", "3")
    assert not copies.uncopied and parse("javascript", text) is not None


@pytest.mark.parametrize("form", [
    "slug décode les accents",  # mocha's full title
    "slug > décode les accents",  # vitest, TAP
    "décode les accents",  # the bare title
])
def test_ids_keep_the_form_the_task_wrote_them_in(form):
    copies = plan({"a.test.js": JEST}, [form])
    new = copies.renamed[form]
    prefix = form[:-len("décode les accents")]
    assert new.startswith(prefix) and all(k.startswith(prefix) for k in copies.copies)
    text = copies.files["a.test.js"]
    title = new.removeprefix(prefix)
    assert f"it(`{title}`, () => {{" in text  # a template title stays one, without substitutions
    statements = calls(text)
    for copy_id in copies.copies:
        diff = token_changes("javascript", statements[title], statements[copy_id.removeprefix(prefix)])
        assert diff[1][0] in ("'ete-a-zurich'", "'not a string'") and len(diff) == 2
        assert diff[1][1] != diff[1][0] and "\\" not in diff[1][1]


def test_negations_matchers_spreads_and_repeated_keys_are_no_sites():
    copies = plan({"a.test.js": JEST}, ["slug › never equals the input"])
    assert copies.uncopied == ["slug › never equals the input"] and not copies.copies
    assert set(copies.renamed) == {"slug › never equals the input"}


MODIFIERS = """\
describe('math', () => {
  it.only('adds', () => { expect(add(1, 2)).toBe(3); });
  it.skip('subtracts', () => { expect(sub(3, 2)).toBe(1); });
  test.each([[1, 2]])('doubles %i', (a, b) => { expect(a * 2).toBe(b); });
  it(`adds ${'in'} a template`, () => { expect(add(1, 1)).toBe(2); });
  it('answers', () => { expect(answer()).toMatchSnapshot(); expect(answer()).toBe(42); });
  it('reads its context', ({ task }) => { expect(task.name).toBe('reads its context'); });
  it('reads its name', (t) => { expect(add(2, 2)).toBe(4); expect(t.name).toBe('reads its name'); });
  let total = 0;
  it('counts', () => { total += add(1, 1); expect(total).toBe(2); });
});
describe.skip('later', () => {
  it('multiplies', () => { expect(mul(2, 2)).toBe(4); });
});
"""

HOOKED = """\
describe('golden', function () {
  let expected;
  beforeEach(function () { expected = load(this.currentTest.title); });
  it('renders', function () { assert.strictEqual(render(), 'x'); });
});
"""


def test_modified_templated_and_name_keyed_tests_are_uncopied():
    f2p = ["math › adds", "math › subtracts", "math › doubles 1", "math › adds in a template", "math › answers",
           "math › reads its context", "math › reads its name", "math › counts", "later › multiplies", "golden › renders"]
    copies = plan({"math.test.js": MODIFIERS, "golden.test.js": HOOKED}, f2p)
    assert copies.uncopied == f2p and not copies.files and not copies.copies and not copies.renamed


CALLBACKS = """\
describe('io', function () {
  it('reads a file', function (done) {
    assert.equal(size('a'), 10);
    read('a', (err, data) => {
      assert.equal(data, 'abc');
      done();
    });
    assert.equal(size('b'), 20);
  });
  it('stops early', () => {
    if (skip()) return;
    assert.deepEqual(list(), [1, 2]);
  });
  it('throws briefly', () => {
    expect(() => read()).toThrow('no');
    expect(() => read()).toThrowError(/no file/);
  });
});
"""


def test_only_statements_the_test_surely_runs_are_sites():
    copies = plan({"io.test.js": CALLBACKS}, ["io reads a file", "io stops early", "io throws briefly"])
    assert copies.uncopied == ["io stops early", "io throws briefly"]
    text = copies.files["io.test.js"]
    assert text.count("assert.equal(data, 'abc');") == 4 and text.count("assert.equal(size('b'), 20);") == 4
    sizes = re.findall(r"assert\.equal\(size\('a'\), (\d+)\);", text)
    assert len(set(sizes)) == 4 and "10" in sizes  # the one site before the callback is handed on


TYPESCRIPT = """\
import { describe, expect, it } from 'vitest';
import { Point, norm } from '../src/point';

describe('point', () => {
  it('measures a vector', (): void => {
    const p: Point = { x: 3, y: 4 } satisfies Point;
    expect(norm(p)).toBe(5 as number);
    expect<Point>(p).toEqual({ x: 3, y: 4 } as Point);
  });
});
"""

TSX = """\
import { render } from '@testing-library/react';

describe('Badge', () => {
  it('shows the count', () => {
    const view = render(<Badge count={3} />);
    expect(view.text()).toBe('3 new');
  });
});
"""


@pytest.mark.parametrize(("path", "text", "grammar"), [("src/point.test.ts", TYPESCRIPT, "typescript"),
                                                       ("src/Badge.test.tsx", TSX, "tsx"),
                                                       ("src/Badge.test.jsx", TSX, "javascript")])
def test_typescript_and_jsx_files_are_read_with_their_own_grammar(path, text, grammar):
    f2p = ["point measures a vector"] if "point" in path else ["Badge shows the count"]
    copies = plan({path: text}, f2p)
    assert len(copies.copies) == 3 and not copies.uncopied
    assert parse(grammar, copies.files[path]) is not None


def test_a_file_the_grammar_cannot_read_gets_no_copies():
    broken = JEST.replace("it('lowers and joins words', () => {", "it('lowers and joins words', () => ")
    assert broken != JEST and parse("javascript", broken) is None
    copies = plan({"a.test.js": broken}, ["slug › ascii › lowers and joins words"])
    assert copies.uncopied == ["slug › ascii › lowers and joins words"] and not copies.files


TWICE = """\
describe('a', () => { it('works', () => { expect(f()).toBe(1); }); });
describe('b', () => { it('works', () => { expect(g()).toBe(2); }); });
"""


def test_an_id_that_answers_to_two_tests_moves_neither():
    copies = plan({"t.test.js": TWICE}, ["a › works"], ["works"])
    assert copies.uncopied == ["a › works"] and not copies.files
    assert len(plan({"t.test.js": TWICE}, ["a › works"], ["b › works"]).copies) == 3


def test_new_titles_are_no_title_of_any_file_given():
    other = "describe('slug', () => {\n" + "".join(
        f"  it('{a} {b}', () => {{}});\n" for a in ("lowers", "and", "joins", "words", "slug", "ascii")
        for b in ("lowers", "and", "joins", "words", "slug", "ascii") if a != b) + "});\n"
    for seed in range(5):
        copies = plan({"a.test.js": JEST, "b.test.js": other}, ["slug › ascii › lowers and joins words"], seed=seed)
        drawn = [k.rsplit(" › ", 1)[1] for k in (*copies.copies, copies.renamed["slug › ascii › lowers and joins words"])]
        assert len(set(drawn)) == 4 and not any(f"'{t}'" in other for t in drawn), drawn


def test_the_needle_is_the_title_or_the_longest_plain_word():
    assert WRITER.needle("slug › ascii › lowers and joins words") == "lowers and joins words"
    assert WRITER.needle("point > measures a vector") == "measures a vector"
    assert WRITER.needle("parse decodes plus as space") == "decodes"
    assert WRITER.needle("quotes › it's quoted") == "quoted"  # the source may escape the quote
    assert WRITER.needle("a › it's") is None


@pytest.mark.docker
@pytest.mark.parametrize("task", load_taskset(str(DEMO), skip_invalid=False).tasks, ids=lambda t: t.instance_id)
def test_demo_js_at_the_gold_patch_passes_every_original_and_fails_every_copy(task, tmp_path):
    run = run_with_copies(task, DEMO, WRITER, tmp_path, seed=len(task.instance_id))
    assert run.copies.copies and not run.copies.uncopied
    for test_id in (*task.FAIL_TO_PASS, *task.PASS_TO_PASS):
        assert run.status(run.copies.renamed.get(test_id, test_id)) == TestStatus.passed, test_id
    for copy_id in run.copies.copies:
        assert run.status(copy_id) == TestStatus.failed, copy_id
    assert run.results.exit_code != 0
