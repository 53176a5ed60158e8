"""Blind checks: the rewrite on the host, the plugin's values in a real interpreter, the judgement.

The property that matters for honest fixes: for a value and a literal, the host says "equal"
exactly when Python's `==` in the test process would have, except for objects that are equal
to anything (those fail: nothing plain is equal to everything).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from factory.records import Reason, Task, TestStatus
from factory.verify import blind
from factory.verify.controls import ControlPlan
from factory.verify.grading import TestRun, grade
from tests.verify.test_grading import numbered

PLUGIN = Path(__file__).parents[2] / "factory/verify/container"


AS_A_TEST = """
import types
factory_pytest_plugin.pytest_runtest_protocol(types.SimpleNamespace(nodeid="t.py::test_it", obj=test_it), None)
factory_pytest_plugin.pytest_runtest_logstart("t.py::test_it", None)
test_it()
"""
"""The end of a script that runs the plugin's stand-ins outside pytest: `test_it` runs as the test
pytest would be running (a stand-in answers only its own test's body)."""


def rewritten(body: str, decorators: str = "") -> tuple[str, list[blind.Expected]]:
    text = f"{decorators}def test_it(self):\n{textwrap.indent(textwrap.dedent(body), '    ')}"
    files, checks = blind.rewrite({"t.py": text}, [{"t.py::test_it"}])
    return files["t.py"], checks.get("t.py::test_it", [])


def test_checks_against_literals_become_blind_and_keep_their_lines():
    body = """\
        x = f()
        assert x == {"a": [1, 2.5], "b": (None, b"z")}, "message naming the value"
        self.assertEqual(g(
            1), 'text')
        assert x is None
        assert 7 == h()
        assert x == y
        assert x != 3
        with ctx():
            assert x == 4
    """
    text, checks = rewritten(body)
    ast.parse(text)
    assert len(text.splitlines()) == len(textwrap.dedent(body).splitlines()) + 1
    assert [(c.statement, c.line, c.how, c.value) for c in checks] == [
        (1, 3, "eq", {"a": [1, 2.5], "b": (None, b"z")}), (2, 4, "eq", "text"), (3, 6, "is", None), (4, 7, "eq", 7)]
    for value in ("message", "'text'", "None", "7 ==", "2.5"):
        assert value not in text, value  # the expected values are gone from the file
    assert "assert x == y" in text and "assert x != 3" in text and "assert x == 4" in text
    assert 'assert __factory_seen__(1, "eq", (g(\n' in text and '1)), "str")\n' in text


def test_checks_that_may_not_run_or_that_xfail_stay_as_they_are():
    assert rewritten("if f():\n    return\nassert g() == 3\n") == (
        "def test_it(self):\n    if f():\n        return\n    assert g() == 3\n", [])
    assert rewritten("assert g() == 3\n", "@pytest.mark.xfail(strict=True)\n")[1] == []
    assert rewritten("yield\nassert g() == 3\n")[1] == []
    assert rewritten("assert g() == 3\n")[1][0].value == 3


def test_only_the_functions_named_are_rewritten():
    text = "def test_a():\n    assert f() == 1\n\n\nclass TestB:\n    def test_c(self):\n        assert f() == 2\n"
    files, checks = blind.rewrite({"t.py": text}, [{"t.py::TestB::test_c"}])
    assert set(checks) == {"t.py::TestB::test_c"} and "assert f() == 1" in files["t.py"]
    assert "== 2" not in files["t.py"]


# (value in the test process, the test's literal): the host must agree with Python's `==`
CASES = [
    ("1", "1"), ("1.0", "1"), ("True", "1"), ("2", "3"), ("'a'", "'a'"), ("'a'", "'b'"), ("b'x'", "b'x'"),
    ("bytearray(b'x')", "b'x'"), ("[1, 2]", "(1, 2)"), ("(1, 2)", "(1, 2)"), ("{1, 2}", "{2, 1}"),
    ("frozenset({1})", "{1}"), ("{'a': [1, (2, 3)]}", "{'a': [1, (2, 3)]}"), ("{'a': 1}", "{'a': 2}"),
    ("collections.OrderedDict(a=1)", "{'a': 1}"), ("collections.defaultdict(list, a=[1])", "{'a': [1]}"),
    ("collections.namedtuple('P', 'x y')(1, 2)", "(1, 2)"), ("Color.RED", "'red'"), ("Color.RED", "'RED'"),
    ("Level.HIGH", "3"), ("decimal.Decimal('2')", "2"), ("fractions.Fraction(1, 2)", "0.5"),
    ("decimal.Decimal('0.1')", "0.1"), ("10**40", "10**40"), ("float('nan')", "0.0"), ("-0.0", "0"),
    ("1+2j", "(1+2j)"), ("Version('1.0')", "'1.0'"), ("Version('1.0')", "'2.0'"), ("pathlib.Path('a')", "'a'"),
    ("None", "None"), ("0", "None"), ("[Color.RED, Level.HIGH]", "['red', 3]"), ("''", "''"), ("[]", "()"),
    ("'é\\u2028'", "'é\\u2028'"),
    ("{'a': 1}.keys()", "{'a'}"), ("{'a': 1}.items()", "{('a', 1)}"), ("{'a': 1}.keys()", "['a']"),
    ("collections.UserDict(a=1)", "{'a': 1}"), ("collections.UserList([1])", "[1]"), ("range(2)", "[0, 1]"),
    ("collections.Counter('aa')", "{'a': 2}"), ("iter([1])", "[1]"), ("memoryview(b'x')", "b'x'"),
    ("Keys(('a', 'b'))", "['a', 'b']"), ("Keys(('a', 'b'))", "('a', 'b')"), ("Keys(('a', 'b'))", "['b', 'a']"),
    ("[Version('1.0'), Version('2.0')]", "['1.0', '2.0']"), ("{'v': Version('1.0')}", "{'v': '1.0'}"),
]
ALWAYS_EQUAL = ["unittest.mock.ANY", "Anything()", "Only_str()"]

PROBE = """
import builtins, collections, decimal, enum, fractions, json, os, pathlib, sys, unittest.mock
sys.path.insert(0, sys.argv[1])
import factory_pytest_plugin

class Color(str, enum.Enum):
    RED = "red"

class Level(enum.IntEnum):
    HIGH = 3

class Version:
    def __init__(self, text): self.text = text
    def __eq__(self, other): return str(self) == str(other)
    def __str__(self): return self.text

class Anything:
    def __eq__(self, other): return True

class Keys(tuple):
    def __eq__(self, other):
        return list(self) == list(other) if isinstance(other, (list, tuple)) else NotImplemented
    __hash__ = tuple.__hash__

class Only_str(str):
    def __eq__(self, other): return True
    __hash__ = str.__hash__

def test_it():
    for number, (value, literal, how) in enumerate(json.loads(sys.argv[2])):
        v = eval(value)
        equal = bool(v is eval(literal)) if how == "is" else bool(v == eval(literal))
        print(json.dumps([number, equal]))
        kind = type(eval(literal)).__name__  # as blind.rewrite names it
        assert builtins.__factory_seen__(number, how, v, kind if kind in ("list", "tuple", "dict", "set", "str") else None)

""" + AS_A_TEST


def sent(cases: list[tuple[str, str, str]]) -> tuple[dict[int, list], dict[int, bool]]:
    """What the real plugin sends for each case, and what Python's own comparison said."""
    read, write = os.pipe()
    env = {**os.environ, "FACTORY_REPORT_FD": str(write)}
    out = subprocess.run([sys.executable, "-c", PROBE, str(PLUGIN), json.dumps(cases)], env=env, pass_fds=(write,),
                         capture_output=True, text=True, timeout=60)
    os.close(write)
    with os.fdopen(read) as pipe:
        records = [json.loads(line) for line in pipe.read().splitlines()]
    assert out.returncode == 0, out.stderr
    python = dict(json.loads(line) for line in out.stdout.splitlines())
    values: dict[int, list] = {}
    for r in records:
        assert r["kind"] == "seen" and r["nodeid"] == "t.py::test_it"
        values.setdefault(r["check"], []).append(r["value"])
    return values, python


def test_the_host_agrees_with_pythons_equality_on_plain_data_and_its_look_alikes():
    cases = [(v, lit, "eq") for v, lit in CASES] + [("None", "None", "is"), ("False", "0", "is"),
                                                       ("0", "False", "is"), ("True", "True", "is")]
    values, python = sent(cases)
    for number, (value, literal, how) in enumerate(cases):
        check = blind.Expected(0, 1, how, eval(literal) if literal.startswith("10**") else ast.literal_eval(literal))
        agreed = blind.judge({0: values[number]}, [check]) is None
        assert agreed == python[number], (value, literal, values[number])
    assert python[CASES.index(("Version('1.0')", "'1.0'"))]  # the cases test both ways
    assert not all(python.values())


def test_objects_equal_to_anything_are_equal_to_nothing_on_the_host():
    cases = [(v, "12345", "eq") for v in ALWAYS_EQUAL] + [(v, "'secret'", "eq") for v in ALWAYS_EQUAL]
    values, python = sent(cases)
    assert all(python.values())  # in the process they pass any `assert x == literal`
    for number, (_, literal, how) in enumerate(cases):
        why = blind.judge({0: values[number]}, [blind.Expected(0, 9, how, ast.literal_eval(literal))])
        assert why is not None and "line 9" in why[1], values[number]


def test_a_value_sent_many_times_is_sent_once_and_too_many_values_end_as_a_failure():
    cases = [("7", "7", "eq")] * 30
    values, _ = sent([*cases])
    assert all(len(v) == 1 for v in values.values())
    many = [(f"{i}", "0", "eq") for i in range(40)]
    script = PROBE.replace("enumerate(json.loads(sys.argv[2]))", "[(0, c) for c in json.loads(sys.argv[2])]")
    read, write = os.pipe()
    subprocess.run([sys.executable, "-c", script, str(PLUGIN), json.dumps(many)], pass_fds=(write,), timeout=60,
                   env={**os.environ, "FACTORY_REPORT_FD": str(write)}, capture_output=True, check=True)
    os.close(write)
    with os.fdopen(read) as pipe:
        records = [json.loads(line) for line in pipe.read().splitlines()]
    assert len(records) == 21 and records[-1]["value"] == ["opaque", "too many values"]
    assert blind.judge({0: [r["value"] for r in records]}, [blind.Expected(0, 1, "eq", 0)]) is not None


@pytest.mark.parametrize("value", [["int", "7"], ["str", 7], ["list", 7], ["dict", [[1]]], ["bool"], "7", ["set", [["x"]]]])
def test_malformed_values_match_nothing(value):
    assert blind.judge({0: [value]}, [blind.Expected(0, 1, "eq", 7)]) is not None


def toy_task() -> Task:
    return Task(instance_id="toy", repo="toy", problem_statement="", image="toy",
                FAIL_TO_PASS=["t.py::test_a"], PASS_TO_PASS=["t.py::test_b"])


def graded(records: list[dict], checks: dict[str, list[blind.Expected]]) -> tuple[Reason | None, str, dict]:
    plan = ControlPlan(blind=checks)
    stream = numbered([{"kind": "collected", "count": 2, "always_equal": []}, *records, {"kind": "done", "exitstatus": 0}])
    verdict = grade(toy_task(), TestRun.from_report({"records": stream}, plan), [])
    return verdict.reason, verdict.detail, verdict.tests


def passed(nodeid: str) -> list[dict]:
    return [{"kind": "test", "nodeid": nodeid, "when": w, "outcome": "passed", "xfail": False}
            for w in ("setup", "call", "teardown")]


def test_a_test_pytest_passed_fails_on_the_host_when_a_blind_check_got_another_value_or_none():
    checks = {"t.py::test_a": [blind.Expected(0, 3, "eq", 10), blind.Expected(1, 4, "is", None)]}
    good = [{"kind": "seen", "nodeid": "t.py::test_a", "check": 0, "value": ["int", 10]},
            {"kind": "seen", "nodeid": "t.py::test_a", "check": 1, "value": ["none"]}]
    assert graded([*passed("t.py::test_a"), *good, *passed("t.py::test_b")], checks)[0] is None
    wrong = [good[0], {**good[1], "value": ["bool", False]}]
    reason, detail, tests = graded([*passed("t.py::test_a"), *wrong, *passed("t.py::test_b")], checks)
    assert reason is Reason.tests_failed and tests["t.py::test_a"] is TestStatus.failed
    assert "line 4 got False" in detail
    reason, detail, _ = graded([*passed("t.py::test_a"), good[1], *passed("t.py::test_b")], checks)
    assert reason is Reason.tests_failed and "line 3 never reported a value" in detail
    # the value sent under another test's id counts for nothing
    other = [{**r, "nodeid": "t.py::test_b"} for r in good]
    assert graded([*passed("t.py::test_a"), *other, *passed("t.py::test_b")], checks)[0] is Reason.tests_failed


def test_a_check_record_the_plugin_does_not_write_is_tampering():
    checks = {"t.py::test_a": [blind.Expected(0, 3, "eq", 10)]}
    forged = {"kind": "seen", "nodeid": "t.py::test_a", "check": "0", "value": ["int", 10]}
    assert graded([*passed("t.py::test_a"), forged, *passed("t.py::test_b")], checks)[0] is Reason.tampered


ROWS = """\
@pytest.mark.parametrize(('text', 'expected'), [
    pytest.param('a', 'first value', id='one'),
    pytest.param('b', ('second',
                       'value'), id='two'),
])
def test_it(text, expected):
    assert f(text) == expected
"""


def test_an_expected_value_from_a_parametrize_row_is_blanked_in_every_row_and_known_by_row_id():
    files, checks = blind.rewrite({"t.py": ROWS}, [{"t.py::test_it"}])
    text = files["t.py"]
    assert "first value" not in text and "second" not in text and text.count("None") == 2
    assert "id='one'" in text and "id='two'" in text and len(text.splitlines()) == len(ROWS.splitlines())
    [check] = checks["t.py::test_it"]
    assert check.rows == {"one": "first value", "two": ("second", "value")}
    sent = {0: [["str", "first value"]]}
    assert blind.judge(sent, [check], "one") is None and blind.judge(sent, [check], "two") is not None
    assert "no expected value for [three]" in blind.judge(sent, [check], "three")[1]


@pytest.mark.parametrize("change", [
    (", id='one')", ")"),  # an id made from the values: blanking them would change it
    ("assert f(text) == expected", "assert f(text, expected) == expected"),  # read elsewhere too
    ("@pytest.mark", "pytestmark = []\n\n\n@pytest.mark"),  # a mark from outside may add to the ids
])
def test_rows_stay_where_blanking_them_could_change_what_runs(change):
    files, checks = blind.rewrite({"t.py": ROWS.replace(*change)}, [{"t.py::test_it"}])
    assert not checks and "first value" in files["t.py"]


RAISING = """
import builtins, json, sys
sys.path.insert(0, sys.argv[1])
import factory_pytest_plugin

class ParseError(ValueError):
    pass

def test_it():
    for number, code in enumerate(json.loads(sys.argv[2])):
        with builtins.__factory_raises__(number):
            exec(code)

""" + AS_A_TEST


def test_a_blind_raises_block_judges_as_pytest_raises_would():
    blocks = ["raise ParseError('not a duration: 5')", "raise KeyError('k')", "pass", "raise SystemExit(2)"]
    read, write = os.pipe()
    subprocess.run([sys.executable, "-c", RAISING, str(PLUGIN), json.dumps(blocks)], pass_fds=(write,), timeout=60,
                   env={**os.environ, "FACTORY_REPORT_FD": str(write)}, capture_output=True, check=True)
    os.close(write)
    with os.fdopen(read) as pipe:
        sent = {r["check"]: [r["value"]] for r in map(json.loads, pipe.read().splitlines())}

    def ok(number: int, name: str, pattern: str | None = None) -> bool:
        return blind.judge({0: sent[number]}, [blind.Expected(0, 1, "raises", (name, pattern))]) is None

    assert ok(0, "ParseError") and ok(0, "ValueError") and ok(0, "Exception") and ok(0, "ValueError", r"duration: \d")
    assert not ok(0, "KeyError") and not ok(0, "ParseError", "not a number")
    assert ok(1, "LookupError") and not ok(1, "ValueError")
    assert not ok(2, "Exception") and ok(3, "SystemExit")
    assert "nothing raised" in blind.judge({0: sent[2]}, [blind.Expected(0, 1, "raises", ("ValueError", None))])[1]


def test_a_raises_block_is_blind_only_where_its_class_is_known_by_its_own_name():
    def blinded(header: str, imports: str = "") -> tuple | None:
        text = f"{imports}def test_it():\n    {header}\n        f()\n"
        _, checks = blind.rewrite({"t.py": text}, [{"t.py::test_it"}])
        return checks["t.py::test_it"][0].value if checks else None

    assert blinded("with pytest.raises(ValueError, match='bad'):") == ("ValueError", "bad")
    assert blinded("with pytest.raises(errors.ParseError):", "import errors\n") == ("errors.ParseError", None)
    assert blinded("with pytest.raises(PE):", "from pkg import ParseError as PE\n") == ("PE", None)
    assert blinded("with self.assertRaises(KeyError):") == ("KeyError", None)
    for unknown in ("with pytest.raises(Err):", "with pytest.raises(ValueError) as info:", "with self.assertRaises(self.error):",
                    "with pytest.raises(errs.ParseError):",
                    "with pytest.raises((KeyError, ValueError)):", "with pytest.raises(ValueError, match=PATTERN):"):
        assert blinded(unknown, "Err = make()\n") is None, unknown
