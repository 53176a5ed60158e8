"""The final-state verifier's rules on their own (no engine): which command names a test script
relies on, which changes of the state refuse it, and the processes the tests left running."""

import pytest

from factory.records import FlagKind, Task, TerminalSpec
from factory.verify.final_state import TOOLS, _left_running, judge_changes, relied_on


def _task(script: str) -> Task:
    return Task(instance_id="t", repo="", image="i", problem_statement="p",
                terminal=TerminalSpec(tests={"test.sh": script}, script="test.sh"))


@pytest.mark.parametrize(("script", "command"), [
    ("if sha256sum --check /tests/expected.sha256; then echo 1; fi", "sha256sum"),
    ("while ! nc -z localhost 80; do sleep 1; done", "nc"),
    ("X=1 Y=2 jq . out.json", "jq"),
    ("/usr/bin/md5sum out", "md5sum"),
    ("if time exec ./run; then :; fi\nthen\n  diff -q a b", "diff"),
    ("result=$(wc -l < out)", "wc"),
    ("{ cmp a b; } || exit 1", "cmp"),
])
def test_a_command_after_a_keyword_an_assignment_or_a_path_is_relied_on(script, command):
    assert command in relied_on(_task(script))


def test_upper_case_words_are_variables_not_commands():
    assert relied_on(_task("REWARD=1\n$CHECK")) == TOOLS


@pytest.mark.parametrize(("kind", "path"), [
    ("changed", "/usr/lib/python3/dist-packages/pytest/__init__.py"),
    ("deleted", "/usr/local/lib/python3.11/json/decoder.py"),
    ("added", "/usr/local/lib/python3.11/pytest.py"),  # in the standard library's folder: shadows the package
    ("changed", "/usr/bin/sha256sum"),
])
def test_a_changed_python_module_or_relied_on_program_refuses_the_state(kind, path):
    refused, _ = judge_changes([(kind, path)], relied_on(_task("if sha256sum -c x; then echo 1; fi")))
    assert refused == [f"{kind} {path}"]


@pytest.mark.parametrize(("kind", "path"), [
    ("added", "/usr/local/lib/python3.11/site-packages/tabulate.py"),  # an install
    ("added", "/usr/lib/python3/dist-packages/yaml/__init__.py"),
    ("changed", "/app/inventory/__main__.py"),  # the agent's own work
    ("added", "/usr/local/bin/report-tool"),  # a program the tests do not run
])
def test_an_install_or_the_agent_s_own_work_does_not(kind, path):
    assert judge_changes([(kind, path)], relied_on(_task("pytest /tests"))) == ([], [])


def test_a_new_user_s_own_start_up_files_are_not_named_but_root_s_are():
    changes = [("added", "/home/release"), ("added", "/home/release/.bashrc"), ("added", "/home/release/.profile"),
               ("changed", "/root/.bashrc")]
    refused, flags = judge_changes(changes, TOOLS)
    assert refused == [] and [f.kind for f in flags] == [FlagKind.altered_system]
    assert "/root/.bashrc" in flags[0].detail and "/home/release" not in flags[0].detail


def test_the_processes_left_running_are_taken_out_of_the_output():
    output = "collected 3 items\nfactory-left-running: sh -c while :; do echo 1; done\n3 passed\n"
    assert _left_running(output) == ("collected 3 items\n3 passed\n", ["sh -c while :; do echo 1; done"])
