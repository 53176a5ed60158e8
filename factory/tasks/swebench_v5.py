"""SWE-bench v5 and SWE-bench Multilingual rows: each row carries its own image and eval script.

The harness (SWE-bench/SWE-bench, `swebench/harness/utils.py::make_test_spec`) reads `image`,
`eval_script`, `log_parser`, `eval_type`, `FAIL_TO_PASS` and `PASS_TO_PASS` (lists or JSON
strings); `patch` is the gold fix and `test_patch` the hidden tests, at `base_commit` in the image.

The eval script checks out the test files, applies `test_patch` from a heredoc, runs the tests
between `: '>>>>> Start Test Output'` and `: '>>>>> End Test Output'`, and resets the test files.
factory applies `test_patch` itself, so only the script's other parts are kept: its environment
lines (`source`, `conda activate`, `export`, ...) become `Task.test_cmd`, so the agent's shells
have them too, and the lines between the markers, after any other set-up line, the test command.
"""

from __future__ import annotations

import re
from typing import Any

from factory.records import StartState, Task
from factory.tasks import fields
from factory.tasks.fields import BadRow
from factory.tasks.runners import LOG_PARSERS, language_name, patch_language, spec_for_parser

START, END = ">>>>> Start Test Output", ">>>>> End Test Output"
EVAL_TYPES = ("pass_and_fail", "fail_only")
_ENVIRONMENT = re.compile(r"^(source |\. |conda activate |export |nvm use |ulimit |set \+)")
_BOOKKEEPING = re.compile(r"^(#!|set -|cd |git (status|show|diff|config)\b|git -c \S+ diff\b)")


def task(row: dict[str, Any], source: str = "", test_cmd: str | None = None) -> Task:
    iid = fields.instance_id(row)
    f2p = fields.need_fail_to_pass(fields.test_ids(row, "FAIL_TO_PASS", iid), iid)
    p2p = fields.test_ids(row, "PASS_TO_PASS", iid)
    eval_type = fields.text(row, "eval_type", iid)
    if eval_type not in EVAL_TYPES:
        raise BadRow(iid, "eval_type", f"{eval_type!r} is not one of {', '.join(EVAL_TYPES)}")
    parser = fields.text(row, "log_parser", iid)
    gold = fields.text(row, "patch", iid)
    environment, setup, command, workdir = read_eval_script(fields.text(row, "eval_script", iid), iid)
    language = _language(row, parser, gold, iid)
    tests = spec_for_parser(parser, "\n".join([*setup, command]), iid=iid, field="log_parser", language=language)
    return Task(
        instance_id=iid,
        repo=fields.text(row, "repo", iid),
        problem_statement=fields.text(row, "problem_statement", iid),
        image=fields.text(row, "image", iid),
        workdir=workdir,
        start=StartState(base_commit=fields.text(row, "base_commit", iid, required=False) or None),
        gold_patch=gold,
        test_patch=fields.text(row, "test_patch", iid),
        FAIL_TO_PASS=f2p,
        # fail_only: the harness grades FAIL_TO_PASS alone (repos whose parser sees only failures)
        PASS_TO_PASS=p2p if eval_type == "pass_and_fail" else [],
        test_cmd=test_cmd if test_cmd is not None else ("\n".join(environment) or None),
        language=language,
        tests=tests,
        source=f"swebench-v5:{source}" if source else "swebench-v5",
    )


def _language(row: dict[str, Any], parser: str, gold: str, iid: str) -> str:
    given = fields.text(row, "language", iid, required=False)
    runner = LOG_PARSERS.get(parser)
    if given:
        return language_name(given)
    if runner is not None and runner.language == "python":
        return "python"
    return patch_language(gold) or (runner.language if runner else "unknown")


def read_eval_script(script: str, iid: str) -> tuple[list[str], list[str], str, str]:
    """(environment lines, other set-up lines, the test command, the repo folder) of an eval script."""
    lines = [line.strip() for line in script.splitlines()]
    start = next((i for i, line in enumerate(lines) if START in line), None)
    end = next((i for i, line in enumerate(lines) if END in line and start is not None and i > start), None)
    if start is None or end is None:
        raise BadRow(iid, "eval_script", f"no '{START}' ... '{END}' markers around the test command")
    command = "\n".join(line for line in lines[start + 1:end] if line)
    if not command:
        raise BadRow(iid, "eval_script", "no test command between the markers")
    workdir = next((line[3:].strip().strip("'\"") for line in lines[:start] if line.startswith("cd /")), "/testbed")
    environment: list[str] = []
    setup: list[str] = []
    for line in lines[:_test_files_step(lines, start)]:
        if not line or line.startswith("#") and not line.startswith("#!"):
            continue
        if _ENVIRONMENT.match(line):
            if line not in environment:
                environment.append(line)
        elif not _BOOKKEEPING.match(line):
            setup.append(line)
    return environment, setup, command, workdir


def _test_files_step(lines: list[str], start: int) -> int:
    """Where the script starts restoring and applying the test files (its first `git checkout`
    or `git apply` before the tests): what follows is the test patch, which factory applies."""
    return next((i for i, line in enumerate(lines[:start]) if re.match(r"git (checkout|apply)\b", line)), start)
