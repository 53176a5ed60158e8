"""Controls: hidden tests copied with one expected value changed.

Host-side checks of the copies (what changes, where they go, which tests they come from,
what happens when no test fits), and once in a real container: under the gold fix every
original passes and every copy fails.
"""

from __future__ import annotations

import ast
import json
import random
import re
import shlex
import subprocess
import textwrap
from pathlib import Path

import pytest

from factory.config import SandboxConfig
from factory.records import StartState, Task, TestStatus
from factory.sandbox.docker import DockerSandbox
from factory.verify import classes, mutants, values
from factory.verify.classes import Classes
from factory.verify.controls import F2P_COPIES, hidden_files, plan_controls
from factory.verify.grading import TestRun, grade
from tests.verify.conftest import F2P, P2P, TOY

PLUGIN = Path(__file__).parents[2] / "factory/verify/container/factory_pytest_plugin.py"
CORE_TESTS = "tests/test_core.py"
SOURCES = {p: (TOY / p).read_text() for p in (CORE_TESTS, "tests/test_pairs.py")}


def task(f2p=F2P, p2p=P2P, hide=(CORE_TESTS,), test_patch="") -> Task:
    return Task(instance_id="toy", repo="toy", problem_statement="", image="toy", FAIL_TO_PASS=list(f2p),
                PASS_TO_PASS=list(p2p), start=StartState(hide_paths=list(hide)), test_patch=test_patch)


def function(tree: ast.Module, name: str) -> ast.FunctionDef:
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def ran(plan, nodeid: str) -> str:
    """The name a hidden test ran under (originals that can be are renamed)."""
    return plan.renamed.get(nodeid, nodeid).split("::")[-1].partition("[")[0]


@pytest.mark.parametrize("seed", range(6))
def test_planning_in_a_file_parsed_before_gives_the_plan_a_fresh_parse_gives(seed):
    """Every verification of a task shares the parse of its hidden test files (`Source.of`) and
    what planning learns of their functions: a plan made after others in the same files (their
    trees shared) is the plan the same draws make from a fresh parse, so no plan changes them."""
    def fresh(rng: random.Random):
        mutants.Source.of.cache_clear()
        mutants.reached.cache_clear()
        return plan_controls(task(), SOURCES, rng)

    first = fresh(random.Random(seed))
    for other in range(5):  # other verifications of the task, in the same trees
        plan_controls(task(), SOURCES, random.Random(1000 + other))
    again = plan_controls(task(), SOURCES, random.Random(seed))
    assert mutants.Source.of(SOURCES[CORE_TESTS]) is mutants.Source.of(SOURCES[CORE_TESTS])
    assert (again.files, again.ids, again.controls, again.renamed, again.blind) == \
        (first.files, first.ids, first.controls, first.renamed, first.blind)


@pytest.mark.parametrize("seed", range(12))
def test_a_control_is_a_hidden_test_renamed_with_one_literal_changed(seed):
    plan = plan_controls(task(), SOURCES, random.Random(seed))
    assert len(plan.controls) == F2P_COPIES and plan.weak == ""
    before, after = ast.parse(SOURCES[CORE_TESTS]), ast.parse(plan.planned[CORE_TESTS])
    for control in plan.controls:
        name, original = control.nodeid.split("::")[1], control.original.split("::")[1]
        assert mutants.is_twin(function(before, original), function(after, name))
        assert name.startswith("test_") and name not in {n.name for n in before.body if isinstance(n, ast.FunctionDef)}
    # the FAIL_TO_PASS test is always copied; test_pairs.py was visible to the agent, so never
    assert F2P[0] in {c.original for c in plan.controls}
    assert set(plan.files) == {CORE_TESTS}
    # every original function is still there, unchanged but for its name where it was copied
    kept = {ast.dump(n) for n in after.body}
    for n in before.body:
        name = ran(plan, f"{CORE_TESTS}::{getattr(n, 'name', '')}")
        assert ast.dump(n) in kept or mutants.is_twin(n, function(after, name), changes=0)
    assert set(plan.renamed) <= {c.original for c in plan.controls}
    # every test once, each file's tests in the order the file defines them
    hidden = [plan.renamed.get(i, i) for i in [*F2P, *P2P]]
    assert sorted(plan.ids) == sorted([*hidden, *(c.nodeid for c in plan.controls)])
    core = [i.split("::")[1] for i in plan.ids if i.startswith(CORE_TESTS)]
    defined = [n.name for n in after.body if isinstance(n, ast.FunctionDef)]
    assert core == defined


def test_nothing_fixed_tells_a_control_from_its_original():
    """Across plans, copies sit before and after their originals, with longer and shorter names,
    and integers move by 2 to 9 either way (never by one: an off-by-one bug would pass them)."""
    placed, lengths, steps = set(), set(), set()
    for seed in range(60):
        plan = plan_controls(task(), SOURCES, random.Random(seed))
        tree = ast.parse(plan.planned[CORE_TESTS])
        for c in plan.controls:
            name, original = c.nodeid.split("::")[1], ran(plan, c.original)
            copy, orig = function(tree, name), function(tree, original)
            placed.add(copy.lineno < orig.lineno)
            lengths.add((len(name) > len(original)) - (len(name) < len(original)))
            old, new = (ast.literal_eval(f.body[-1].test.comparators[0]) for f in (orig, copy))
            steps.add(abs(new) - abs(old))
    assert placed == {True, False}
    assert {-1, 1} <= lengths
    assert steps <= set(range(-9, -1)) | set(range(2, 10)) and min(steps) < 0 < max(steps)


def sites(body: str, args: str = "", decorators: str = "", param: str = "") -> list[str]:
    src = mutants.Source(f"{decorators}def test_it({args}):\n{textwrap.indent(textwrap.dedent(body), '    ')}")
    fn = src.tree.body[-1]
    return [ast.get_source_segment(src.data.decode(), n) for _, n in mutants.strong_sites(fn, param)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("assert f() == 3", ["3"]),
        ("assert 'a' == f()", ["'a'"]),
        ("assert f() == (1, 'x')", ["(1, 'x')"]),
        ("assert f() == -5", ["-5"]),
        ("assert f() is None", ["None"]),
        ("x = f()\nassert x == [1.5, b'y'], 'message'", ["[1.5, b'y']"]),
        ("self.assertEqual(f(), 2.5)", ["2.5"]),
        # no site: compared with no literal, not equality, not at the top of the body, not always reached
        ("with pytest.raises(ValueError, match='not a duration'):\n    f()", ["'not a duration'", "ValueError"]),
        ("self.assertRaisesRegex(KeyError, 'no key', f)", ["'no key'"]),
        # the expected class of a raise-only test, unless any error falls under it
        ("with pytest.raises(ValueError, match=r'\\[a\\] is'):\n    f()", ["ValueError"]),  # regex: no pattern site
        ("with pytest.raises(ValueError):\n    f()", ["ValueError"]),
        ("with pytest.raises(errors.ParseError) as info:\n    f()", ["errors.ParseError"]),
        ("with self.assertRaises(KeyError):\n    f()", ["KeyError"]),
        ("with pytest.raises(Exception):\n    f()", []),
        ("with pytest.raises((KeyError, ValueError)):\n    f()", []),
        ("assert f() == []", ["[]"]),
        ("assert f() == g()", []),
        ("assert f() != 3", []),
        ("assert 1 == 1", []),
        ("with pytest.raises(E):\n    assert f() == 3", ["E"]),
        ("if f():\n    return\nassert g() == 3", []),
        ("yield\nassert f() == 3", []),
    ],
)
def test_sites_are_expected_literals_of_reached_equalities(body, expected):
    assert sites(body, "self" if "self." in body else "") == expected


PARAMS = (
    "@pytest.mark.parametrize(('text', 'expected'), [pytest.param('a', 1, id='one'), pytest.param('b', 2, id='two')])\n"
)


def test_a_parametrize_row_is_a_site_when_its_expected_value_feeds_the_comparison_only():
    assert sites("assert f(text) == expected", "text, expected", PARAMS, "two") == ["2"]
    assert sites("assert f(text) == expected", "text, expected", PARAMS, "three") == []
    assert sites("assert f(text, expected) == expected", "text, expected", PARAMS, "two") == []
    auto = "@pytest.mark.parametrize('word, n', [('x', 1), ('y', 2)])\n"
    assert sites("assert count(word) == n", "word, n", auto, "y-2") == ["2"]
    stacked = "@pytest.mark.parametrize('n', [1])\n" + auto
    assert sites("assert count(word) == n", "word, n", stacked, "y-2-1") == []


@pytest.mark.parametrize("literal", ["10", "'a=b'", "b'key'", "(1, 'x', None)", "-4", "2.5", "''", "'\\n'"])
def test_a_mutated_literal_keeps_its_type_and_changes_its_value(literal):
    src = mutants.Source(f"x = {literal}\n")
    node = src.tree.body[0].value
    for seed in range(20):
        rng = random.Random(seed)
        leaf = mutants.leaf(node, rng)
        edit = values.mutate(src, leaf, rng)
        new = src.data[:edit.start].decode() + edit.text + src.data[edit.end:].decode()
        value, old = ast.literal_eval(new[4:]), ast.literal_eval(literal)
        assert type(value) is type(old) and value != old


def test_a_failing_test_has_several_copies_at_the_same_place():
    plan = plan_controls(task(p2p=["tests/test_pairs.py::test_parse_pair"]), SOURCES, random.Random(3))
    assert {c.original for c in plan.controls} == {F2P[0]} and len(plan.controls) == F2P_COPIES and plan.weak == ""
    tree = ast.parse(plan.planned[CORE_TESTS])
    values = {function(tree, c.nodeid.split("::")[1]).body[0].test.comparators[0].value for c in plan.controls}
    assert len(values) == F2P_COPIES and 10 not in values


def test_tests_the_agent_saw_make_weak_controls_and_a_test_patch_tells_which_it_did_not():
    seen = plan_controls(task(hide=()), SOURCES, random.Random(0))
    assert seen.controls and "could see" in seen.weak
    added = ("diff --git a/tests/test_pairs.py b/tests/test_pairs.py\n--- a/tests/test_pairs.py\n"
             "+++ b/tests/test_pairs.py\n@@ -6,0 +7,3 @@\n+def test_parse_pair_strips():\n+    x = 1\n")
    new = ["tests/test_pairs.py::test_parse_pair_strips"]
    fresh = plan_controls(task(new, [], hide=(), test_patch=added), SOURCES, random.Random(0))
    assert "could see" not in fresh.weak and {c.original for c in fresh.controls} == set(new)
    # ("a", "b") is what the file's other test expects too, so a reader counting echoes would find
    # the original; but the check is blind: copy and original are one code under two names
    assert fresh.told_apart == []
    tree = ast.parse(fresh.files["tests/test_pairs.py"])
    for c in fresh.controls:
        copy, original = function(tree, c.nodeid.split("::")[1]), function(tree, ran(fresh, c.original))
        assert mutants.is_twin(original, copy, changes=0) and "__factory_seen__" in ast.unparse(copy)
        expected = fresh.blind[fresh.renamed.get(c.original, c.original)][0].value
        assert fresh.blind[c.nodeid][0].value != expected == ("a", "b")


def test_every_fail_to_pass_test_has_a_control_or_the_verdict_says_which_has_none():
    """A FAIL_TO_PASS test without a twin is known to be real, and free to forge."""
    source = textwrap.dedent("""\
        @pytest.mark.parametrize(('text', 'n'), [pytest.param('a', 1, id='a'), pytest.param('b', 2, id='b'),
                                                 pytest.param('c', 3, id='c')])
        def test_count(text, n):
            assert count(text) == n


        def test_truth():
            assert ready()


        def test_raises():
            with pytest.raises(ValueError):
                f()


        def test_other():
            assert other() == 'x'
        """)
    f2p = ["t.py::test_count[a]", "t.py::test_count[c]", "t.py::test_truth", "t.py::test_raises", "t.py::test_gen"]
    source += "\n\ndef test_gen():\n    yield check, 1\n"
    plan = plan_controls(task(f2p, ["t.py::test_count[b]", "t.py::test_other"], hide=("t.py",)), {"t.py": source},
                         random.Random(1), count=3)
    originals = {c.original for c in plan.controls}
    assert set(f2p[:4]) <= originals
    assert plan.weak.startswith("1 of 5 FAIL_TO_PASS tests have no control, e.g. t.py::test_gen; 1 of 5 "
                                "FAIL_TO_PASS tests have only copies that a forger may tell apart")
    assert plan.told_apart == ["t.py::test_truth"]  # the raise-only test's block is blind (below)
    tree = ast.parse(plan.planned["t.py"])
    # copies of test_count, both FAIL_TO_PASS rows changed in each, asked for with every row its original is
    copies = {c.nodeid.split("::")[1].partition("[")[0] for c in plan.controls if "test_count" in c.original}
    assert len(copies) == F2P_COPIES
    for count_copy in copies:
        assert mutants.is_twin(function(ast.parse(source), "test_count"), function(tree, count_copy), changes=2)
        assert {i for i in plan.ids if i.startswith(f"t.py::{count_copy}[")} == {f"t.py::{count_copy}[{p}]" for p in "abc"}
    truth = next(c for c in plan.controls if c.original == "t.py::test_truth").nodeid.split("::")[1]
    assert ast.unparse(function(tree, truth).body[0]) == "assert not ready()"
    # a raise-only test expects another class: one no library derives its errors from
    raising = [c.nodeid.split("::")[1] for c in plan.controls if c.original == "t.py::test_raises"]
    expected = {function(tree, name).body[0].items[0].context_expr.args[0].id for name in raising}
    assert len(raising) == len(expected) == F2P_COPIES and expected <= set(mutants.OTHER_ERRORS)
    # and as it runs, the block raises nothing of its own: copy and original are one code, the
    # classes they expect are on the host
    running, original = ast.parse(plan.files["t.py"]), ran(plan, "t.py::test_raises")
    for name in raising:
        assert mutants.is_twin(function(running, original), function(running, name), changes=0)
        assert ast.unparse(function(running, name).body[0].items[0]) == "__factory_raises__(0)"
    assert {plan.blind[f"t.py::{name}"][0].value[0] for name in raising} == expected
    assert plan.blind[f"t.py::{original}"][0].value == ("ValueError", None)


UNWRAP = {
    "one statement": ("with pytest.raises(ValueError):\n    f()", "f()"),
    "setup before": ("x = make()\nwith pytest.raises(KeyError) as info:\n    # the lookup\n"
                     "    x['k']\n    x.close()", "x = make()\n# the lookup\nx['k']\nx.close()"),
    "header on two lines": ("with pytest.raises(\n    ValueError,\n):\n    f(1,\n      2)", "f(1,\n  2)"),
    "unittest": ("with self.assertRaises(TypeError):\n    self.f()", "self.f()"),
    # the last check is inverted: where the bug breaks the block, the copy fails there as its original does
    "a check after": ("with pytest.raises(KeyError) as info:\n    f()\nassert info.value.args",
                      "with pytest.raises(KeyError) as info:\n    f()\nassert not info.value.args"),
}


@pytest.mark.parametrize("body", list(UNWRAP.values()), ids=list(UNWRAP))
def test_without_a_literal_the_last_check_is_inverted_or_its_raises_block_taken_away(body):
    """Sound with nothing else to change: the original passes only if the block raised, and the
    same statements raise out of the copy. The copy keeps the body's comments and formatting."""
    text, expected = body
    src = mutants.Source(f"def test_it(self):\n{textwrap.indent(text, '    ')}\n")
    fn = src.tree.body[0]
    index, edits = mutants.weak_edits(src, fn)
    out = bytearray(src.data)
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        out[e.start:e.end] = e.text.encode()
    copy = ast.parse(out.decode()).body[0]
    assert out.decode() == f"def test_it(self):\n{textwrap.indent(expected, '    ')}\n"
    assert mutants.is_unwrapped(fn, copy) != mutants.is_inverted(fn, copy)
    assert index == len(fn.body) - 1


def test_a_copy_is_confirmed_only_when_it_is_exactly_the_change_that_was_meant():
    def fn(text: str) -> ast.FunctionDef:
        return ast.parse(text).body[0]

    raising = fn("def t():\n    with pytest.raises(E):\n        f('''a\n    b''')\n")
    assert mutants.is_unwrapped(raising, fn("def u():\n    f('''a\n    b''')\n"))
    assert not mutants.is_unwrapped(raising, fn("def u():\n    f('''a\nb''')\n"))  # a string spanning lines changed
    assert not mutants.is_unwrapped(raising, fn("def u(x):\n    f('''a\n    b''')\n"))
    plain = fn("def t():\n    assert f() == g()\n    assert ok\n")
    assert mutants.is_inverted(plain, fn("def u():\n    assert f() != g()\n    assert ok\n"))
    assert mutants.is_inverted(plain, fn("def u():\n    assert f() == g()\n    assert not ok\n"))
    assert not mutants.is_inverted(plain, fn("def u():\n    assert f() != h()\n    assert ok\n"))
    assert not mutants.is_inverted(plain, fn("def u():\n    assert f() != g()\n    assert not ok\n"))
    calls = fn("def t(self):\n    self.assertIn(1, f())\n")
    assert mutants.is_inverted(calls, fn("def u(self):\n    self.assertNotIn(1, f())\n"))
    assert not mutants.is_inverted(calls, fn("def u(self):\n    self.assertNotIn(2, f())\n"))


def test_without_a_test_to_copy_a_planted_control_says_it_is_weak():
    plan = plan_controls(task(["tests/test_x.py::test_gone"], []), {}, random.Random(0))
    assert "planted" in plan.weak and len(plan.controls) == 1 and plan.controls[0].original == ""
    path, text = next(iter(plan.files.items()))
    assert re.fullmatch(r"tests/test_[0-9a-f]{6}_[0-9a-f]{10}\.py", path) and "assert False" in text
    assert sorted(plan.ids) == sorted(["tests/test_x.py::test_gone", plan.controls[0].nodeid])


def test_hidden_files_come_first_and_files_the_patch_touched_never():
    t = task(p2p=["tests/test_pairs.py::test_parse_pair", "tests/test_b.py::test_b"], hide=(CORE_TESTS, "tests/test_b.py"))
    assert hidden_files(t, []) == [CORE_TESTS, "tests/test_b.py", "tests/test_pairs.py"]
    assert hidden_files(t, ["tests/test_b.py"]) == [CORE_TESTS, "tests/test_pairs.py"]


@pytest.mark.docker
async def test_under_the_gold_fix_every_control_fails_and_its_original_passes(toy_task, docker_client):
    """For each hidden test of the toy task in turn: three copies of it, run for real."""
    sandbox = await DockerSandbox.create(toy_task.image, SandboxConfig(), workdir=toy_task.workdir)
    try:
        await sandbox.prepare(StartState())  # the toy repo as it is: the fixed code, every test file
        await sandbox.write_file("/tmp/plugin/factory_pytest_plugin.py", PLUGIN.read_text())
        for seed, nodeid in enumerate([*F2P, *P2P]):
            path = nodeid.split("::")[0]
            plan = plan_controls(task([nodeid], [], hide=(path,)), {path: SOURCES[path]}, random.Random(seed))
            # fewer copies than F2P_COPIES only where a forger has nothing to tell them apart by: it
            # may, or the copies are the original's code under other names (their checks blind)
            blind = all(c.nodeid in plan.blind for c in plan.controls)
            assert plan.controls and (plan.told_apart or blind or len(plan.controls) == F2P_COPIES), nodeid
            await sandbox.write_file(path, plan.files[path])
            ids = " ".join(shlex.quote(i) for i in plan.ids)
            # the real reporting plugin (blind checks send their values through it), graded on the host
            run = (f"FACTORY_REPORT_FD=3 PYTHONPATH=/tmp/plugin python3 -m pytest -p factory_pytest_plugin "
                   f"-p no:cacheprovider -q {ids} 3>/tmp/records >/dev/null; cat /tmp/records")
            out = (await sandbox.exec(run, timeout=120)).output
            await sandbox.write_file(path, SOURCES[path])
            records = [json.loads(line) for line in out.splitlines()]
            verdict = grade(task([nodeid], []), TestRun.from_report({"records": records}, plan), [])
            assert verdict.resolved and verdict.tests == {nodeid: TestStatus.passed}, verdict
            # resolved: every copy failed, here in the process or on the host (a blind check's value)
            assert verdict.controls == len(plan.controls)
            calls = {r["nodeid"]: r["outcome"] for r in records if r.get("when") == "call"}
            assert all(c.nodeid in calls for c in plan.controls)
    finally:
        await sandbox.close()


def test_a_test_the_agent_saw_runs_under_a_new_name_unless_its_name_may_matter():
    """A forger that learnt the failing tests' names in its own sandbox finds nothing under them."""
    source = textwrap.dedent("""\
        def test_size():
            assert size() == 3


        def test_snap(snapshot):
            assert render() == snapshot


        def test_named():
            assert load('test_named.json') == 2


        @pytest.mark.vcr
        def test_fetch():
            assert fetch() == 'x'
        """)
    f2p = ["t.py::test_size", "t.py::test_snap", "t.py::test_named", "t.py::test_fetch"]
    plan = plan_controls(task(f2p, [], hide=()), {"t.py": source}, random.Random(2))
    assert set(plan.renamed) == {"t.py::test_size"}
    new = plan.renamed["t.py::test_size"]
    assert new in plan.ids and "t.py::test_size" not in plan.ids
    assert all(c.nodeid != "t.py::test_size" for c in plan.controls)
    tree = ast.parse(plan.planned["t.py"])
    assert mutants.is_twin(function(ast.parse(source), "test_size"), function(tree, new.split("::")[1]), changes=0)
    assert "def test_size(" not in plan.files["t.py"]
    # unseen, it is renamed as well: among its copies, each a word from it, it would be the one
    # a word from all the others
    assert set(plan_controls(task(f2p, [], hide=("t.py",)), {"t.py": source}, random.Random(2)).renamed) == {"t.py::test_size"}
    # copies sit apart from their originals as the file's tests sit apart, even at the top of a file
    text = plan.files["t.py"]
    starts = [m.start() for m in re.finditer(r"^(@|def )", text, re.M) if m.start() and text[m.start() - 2] == "\n"]
    assert starts and all(text[i - 3:i] == "\n\n\n" for i in starts)


def test_a_copy_and_its_original_are_asked_for_their_instances_in_the_same_order():
    """In the task's order the FAIL_TO_PASS instances come first; a copy listed them last."""
    source = textwrap.dedent("""\
        @pytest.mark.parametrize('text, n', [('a', 1), ('b', 2), ('c', 3), ('d', 4)])
        def test_count(text, n):
            assert count(text) == n
        """)
    f2p, p2p = ["t.py::test_count[a-1]", "t.py::test_count[c-3]"], ["t.py::test_count[b-2]", "t.py::test_count[d-4]"]
    orders = set()
    for seed in range(20):
        plan = plan_controls(task(f2p, p2p, hide=("t.py",)), {"t.py": source}, random.Random(seed))
        by_test: dict[str, list[str]] = {}
        for nodeid in plan.ids:
            base, _, param = nodeid.partition("[")
            by_test.setdefault(base, []).append(param)
        assert len(by_test) >= 2 and len({tuple(p) for p in by_test.values()}) == 1, plan.ids
        orders.add(tuple(next(iter(by_test.values()))))
    assert len(orders) > 1  # shuffled, not sorted: no order is the original's


def test_a_word_no_other_test_name_has_stays_in_the_copy():
    """Else the twin that has it would be the original."""
    source = textwrap.dedent("""\
        def test_parse_gizmo_size():
            assert parse('g') == 3


        def test_parse_small():
            assert parse('s') == 1


        def test_size_small():
            assert size('s') == 1
        """)
    for seed in range(30):
        plan = plan_controls(task(["t.py::test_parse_gizmo_size"], [], hide=("t.py",)), {"t.py": source},
                             random.Random(seed))
        names = [c.nodeid.split("::")[1] for c in plan.controls]
        assert names and all("gizmo" in n for n in names), names


def test_a_test_with_passing_instances_is_copied_by_its_failing_rows_or_flagged():
    """A copy changed in its body fails every instance, the original's PASS_TO_PASS ones pass."""
    rows = textwrap.dedent("""\
        @pytest.mark.parametrize('text, n', [('a', 1), ('b', 2)])
        def test_count(text, n):
            assert count(text) == n
            assert size() == 5
        """)
    plan = plan_controls(task(["t.py::test_count[a-1]"], ["t.py::test_count[b-2]"], hide=("t.py",)), {"t.py": rows},
                         random.Random(0))
    copies = [n for n in ast.parse(plan.planned["t.py"]).body if n.name != ran(plan, "t.py::test_count[a-1]")]
    assert copies and plan.weak == ""
    for copy in copies:
        assert ast.unparse(copy.body) == ast.unparse(function(ast.parse(rows), "test_count").body)  # the body as it was
        table = ast.literal_eval(copy.decorator_list[0].args[1])
        assert table[1] == ("b", 2) and table[0][0] == "a" and table[0][1] != 1  # only the failing row changed
    body_only = rows.replace("'text, n', [('a', 1), ('b', 2)]", "'text', ['a', 'b']").replace("count(text) == n", "count(text)")
    plan = plan_controls(task(["t.py::test_count[a]"], ["t.py::test_count[b]"], hide=("t.py",)), {"t.py": body_only},
                         random.Random(0))
    assert plan.controls and "instances have copies those instances tell apart" in plan.weak


def test_no_member_of_a_group_of_twins_stands_out_by_its_value():
    """A reader who sees an original and its copies side by side: every number is 2 to 9 from every
    other (so each could be the one the others were made from), the original at any rank; a string
    changes where the copy's text is as familiar as the original's, counted in the file, so counting finds nothing."""
    source = textwrap.dedent("""\
        def test_count_of_letters_in_words():
            assert count('alpha beta') == 12


        def test_full_name_of_the_group():
            load('alpha beta')
            assert name() == 'alpha beta gamma'
        """)
    ranks = set()
    f2p = ["t.py::test_count_of_letters_in_words", "t.py::test_full_name_of_the_group"]
    for seed in range(40):
        plan = plan_controls(task(f2p, [], hide=("t.py",)), {"t.py": source}, random.Random(seed))
        tree = ast.parse(plan.planned["t.py"])
        numbers, names = [12], ["alpha beta gamma"]
        for c in plan.controls:
            expected = function(tree, c.nodeid.split("::")[1]).body[-1].test.comparators[0].value
            (numbers if c.original == f2p[0] else names).append(expected)
        assert len(numbers) == len(names) == 1 + F2P_COPIES
        assert all(2 <= abs(a - b) <= 9 for a in numbers for b in numbers if a is not b), numbers
        ranks.add(sorted(numbers).index(12))
        rest = source.replace("'alpha beta gamma'", "")  # the file but the string, as a reader counts echoes
        for copy in names[1:]:
            spot = next(i for i, (a, b) in enumerate(zip(copy, names[0], strict=True)) if a != b)
            assert spot >= len("alpha beta "), copy  # 'alpha beta' is echoed in the file: not changed there
            assert values.familiar(copy, spot, rest) >= values.familiar(names[0], spot, rest), (copy, spot)
    assert len(ranks) >= 3


CLASSES = Classes.parse(textwrap.dedent("""\
    class SemverError(ValueError):
    class InvalidVersion(SemverError):
    class InvalidRange(errors.SemverError, metaclass=Meta):
    class WildcardError(InvalidRange):
    class Both(InvalidRange, KeyError):
    class Plain:
    """))


def test_the_class_tree_says_which_errors_nothing_raised_as_one_can_be_the_other():
    assert CLASSES.ancestors("WildcardError") == {"WildcardError", "InvalidRange", "SemverError", *(
        c.__name__ for c in ValueError.__mro__)}
    assert CLASSES.ancestors("Plain") == {"Plain", "object"} and not CLASSES.error("Plain") and CLASSES.error("KeyError")
    assert CLASSES.unrelated("InvalidRange", "InvalidVersion") and CLASSES.unrelated("InvalidVersion", "TypeError")
    assert not CLASSES.unrelated("ValueError", "IndexError")  # a library's error may be both (numpy's AxisError)
    assert not CLASSES.unrelated("InvalidRange", "SemverError")  # a base
    assert not CLASSES.unrelated("InvalidRange", "WildcardError")  # a fix may raise the subclass
    assert not CLASSES.unrelated("InvalidRange", "KeyError")  # Both derives from the two
    # a tree not known whole says nothing is unrelated: a fix may add a class of both that it does not show
    listing = "class SemverError(ValueError):\nclass InvalidVersion(SemverError):\nclass InvalidRange(SemverError):\n"
    assert Classes.parse(listing).unrelated("InvalidRange", "InvalidVersion")
    for more in ("class Both(\n", "class Aliased(_RangeError, InvalidVersion):\n",
                 "from .errors import InvalidRange as IR\nclass Both(IR, InvalidVersion):\n"):
        assert not Classes.parse(listing + more).unrelated("InvalidRange", "InvalidVersion"), more
    # a root outside the repo cannot derive from the repo's own classes: two of them stay unrelated
    # across it, but not a builtin, which it may derive from
    for more in ("class Plugin(thirdparty.Base):\n", "class Section(Mapping[str, Any]):\n",
                 "class Aliased(_RangeError, TypeError):\n"):
        tree = Classes.parse(listing + more)
        assert tree.unrelated("InvalidRange", "InvalidVersion") and not tree.unrelated("InvalidRange", "KeyError"), more


def test_class_headers_over_several_lines_and_import_aliases_are_read_in_the_repo(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/errors.py").write_text(textwrap.dedent("""\
        from collections.abc import Mapping as M
        from .base import Error as BaseError


        class InvalidRange(
            BaseError,  # a comment
            TypeError,
        ):
            pass


        class Table(M):
            x = f(1)
        """))
    listing = tmp_path / "listing"
    command = classes.COMMAND.replace(classes.LISTING, str(listing))
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
    tree = Classes.parse(listing.read_text())
    assert tree.whole and tree.bases == {"InvalidRange": {"Error", "TypeError"}, "Table": {"Mapping"}}


def test_a_raise_only_test_expects_an_unrelated_class_its_file_names():
    """One the file imports, so that no twin stands out; never a base, a subclass, or one some class derives from
    together with the original's, so that whatever a correct fix raises the copy does not expect."""
    source = textwrap.dedent("""\
        from semverkit import InvalidRange, InvalidVersion, SemverError, WildcardError, Both


        def test_bad_range():
            with pytest.raises(InvalidRange):
                parse_range('1.x.3')


        def test_bad_version():
            with pytest.raises(KeyError):
                parse('x')
        """)
    expected = set()
    for seed in range(10):
        plan = plan_controls(task(["t.py::test_bad_range"], [], hide=("t.py",)), {"t.py": source}, random.Random(seed),
                             classes=CLASSES)
        tree = ast.parse(plan.planned["t.py"])
        expected |= {function(tree, c.nodeid.split("::")[1]).body[0].items[0].context_expr.args[0].id
                     for c in plan.controls}
        assert plan.told_apart == []
    assert expected == {"InvalidVersion"}
    # without the tree, a builtin no library raises, which a reader would spot; but the block is
    # blind: no class shows in the file as it runs, and the test is not told apart
    plan = plan_controls(task(["t.py::test_bad_range"], [], hide=("t.py",)), {"t.py": source}, random.Random(0))
    assert plan.told_apart == [] and "InvalidRange" not in plan.files["t.py"].split("def test_bad_range")[1]
    assert {plan.blind[c.nodeid][0].value[0] for c in plan.controls} <= set(mutants.OTHER_ERRORS)
