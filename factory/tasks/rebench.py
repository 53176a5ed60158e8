"""SWE-rebench V2 rows (nebius/SWE-rebench-V2): 20 languages, a prebuilt image per instance.

A row holds `image_name`, the gold `patch`, the hidden `test_patch` at `base_commit`, and
`install_config` (a dict, or its JSON text where Arrow could not type it) with `test_cmd` (a
command or a list of them) and `log_parser` (a name from SWE-rebench's `lib/agent/log_parsers.py`).
The repo is at `/<name>` of `owner/name`, as its evaluation script `cd`s there; `install` was run
when the image was built and is not run again.
"""

from __future__ import annotations

from typing import Any

from factory.records import StartState, Task
from factory.tasks import fields
from factory.tasks.fields import BadRow
from factory.tasks.rows import SWESMITH_TEST_ENV
from factory.tasks.runners import LOG_PARSERS, language_name, patch_language, spec_for_parser


def task(row: dict[str, Any], source: str = "", test_cmd: str | None = None) -> Task:
    iid = fields.instance_id(row)
    f2p = fields.need_fail_to_pass(fields.test_ids(row, "FAIL_TO_PASS", iid), iid)
    repo = fields.text(row, "repo", iid)
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise BadRow(iid, "repo", f"{repo!r} is not owner/name")
    config = fields.mapping(row, "install_config", iid)
    parser = config.get("log_parser")
    if not isinstance(parser, str) or not parser:
        raise BadRow(iid, "install_config.log_parser", "field required")
    gold = fields.text(row, "patch", iid)
    language = language_name(fields.text(row, "language", iid, required=False) or patch_language(gold) or "unknown")
    tests = spec_for_parser(parser, _command(config.get("test_cmd"), iid), iid=iid,
                            field="install_config.log_parser", language=language)
    python = LOG_PARSERS[parser].language == "python"
    return Task(
        instance_id=iid,
        repo=repo,
        problem_statement=fields.text(row, "problem_statement", iid),
        image=fields.text(row, "image_name", iid),
        workdir=f"/{repo.split('/')[1]}",
        start=StartState(base_commit=fields.text(row, "base_commit", iid, required=False) or None),
        gold_patch=gold,
        test_patch=fields.text(row, "test_patch", iid),
        FAIL_TO_PASS=f2p,
        PASS_TO_PASS=fields.test_ids(row, "PASS_TO_PASS", iid),
        test_cmd=test_cmd if test_cmd is not None else (SWESMITH_TEST_ENV if python else None),
        language="python" if python else language,
        tests=tests,
        source=f"swe-rebench-v2:{source}" if source else "swe-rebench-v2",
    )


def _command(value: Any, iid: str) -> str:
    """One command as given; a list runs every command, as SWE-rebench's own script does
    (`cmd || FAIL=1` each), failing when any did."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, list) and value and all(isinstance(c, str) for c in value):
        commands = [c.strip() for c in value if c.strip()]
        if len(commands) == 1:
            return commands[0]
        if commands:
            return "\n".join(["status=0", *(f"{c} || status=1" for c in commands), "exit $status"])
    raise BadRow(iid, "install_config.test_cmd", "a command, or a list of commands, is required")
