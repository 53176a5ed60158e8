"""Map rows of the task sets people use onto one `Task`.

    SWE-smith  (patch = the diff that introduces the bug; hidden tests = FAIL_TO_PASS files)
    SWE-bench / SWE-Gym  (base_commit, patch = gold fix, test_patch = hidden tests)

A row that does not fit raises `BadRow`, naming the instance and the field at fault.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from factory.errors import UsageError
from factory.records import StartState, Task, TestSpec
from factory.tasks.patches import reverse_patch

# SWE-smith's Python images keep the repo's environment in the conda env `testbed`;
# the guard keeps the same default working in images without conda.
SWESMITH_TEST_ENV = (
    "if [ -f /opt/miniconda3/bin/activate ]; then "
    "source /opt/miniconda3/bin/activate && conda activate testbed; fi"
)


class BadRow(UsageError):
    def __init__(self, instance_id: str, field: str, message: str):
        self.instance_id, self.field = instance_id, field
        super().__init__(f"task {instance_id}: {field}: {message}")


def row_format(row: dict[str, Any]) -> str:
    """`swebench` when the row carries hidden tests as a patch, else `swesmith`."""
    return "swebench" if row.get("test_patch") else "swesmith"


def swesmith_image(name: str) -> str:
    """SWE-smith's current image scheme; old `owner__repo` names are mapped to `owner_1776_repo`.

    A name with a registry or namespace of its own (`host:port/ns/name:tag`) keeps them; only a
    bare name is SWE-smith's, under `swebench/`."""
    repository, sep, tag = name.rpartition(":") if ":" in name.rpartition("/")[2] else (name, "", "")
    folder, _, last = repository.rpartition("/")
    return f"{folder or 'swebench'}/{last.replace('__', '_1776_')}{sep}{tag}"


def _test_ids(row: dict[str, Any], key: str, instance_id: str) -> list[str]:
    value = row.get(key, [])
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError as exc:
            raise BadRow(instance_id, key, f"not a JSON list of test ids ({exc.msg})") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRow(instance_id, key, "must be a list of pytest node ids")
    return value


def _text(row: dict[str, Any], key: str, instance_id: str, *, required: bool = True) -> str:
    value = row.get(key)
    if value is None or value == "":
        if required:
            raise BadRow(instance_id, key, "field required")
        return ""
    if not isinstance(value, str):
        raise BadRow(instance_id, key, f"must be a string, got {type(value).__name__}")
    return value


def test_files(node_ids: list[str]) -> list[str]:
    """The files that hold these pytest node ids, in first-seen order."""
    return list(dict.fromkeys(nid.split("::", 1)[0] for nid in node_ids if "::" in nid or nid.endswith(".py")))


def _alt_fixes(row: dict[str, Any], instance_id: str) -> list[str]:
    """A local task set's other correct fixes (`alt_fixes`: diffs from the start state)."""
    fixes = row.get("alt_fixes") or []
    if not isinstance(fixes, list) or not all(isinstance(f, str) and f.strip() for f in fixes):
        raise BadRow(instance_id, "alt_fixes", "a list of diffs from the start state")
    return list(fixes)


def _test_spec(row: dict[str, Any], instance_id: str) -> dict[str, Any]:
    """A row's `language` and `tests` (how its tests run and are read), when it names them;
    without them the task is Python's and pytest's."""
    out: dict[str, Any] = {}
    if row.get("language") is not None:
        out["language"] = _text(row, "language", instance_id)
    if row.get("tests") is not None:
        try:
            out["tests"] = TestSpec.model_validate(row["tests"])
        except ValidationError as exc:
            raise BadRow(instance_id, "tests", str(exc).replace("\n", " ")) from None
    return out


def task_from_row(row: dict[str, Any], fmt: str = "auto", source: str = "", test_cmd: str | None = None) -> Task:
    instance_id = row.get("instance_id")
    if not isinstance(instance_id, str) or not instance_id:
        raise BadRow(str(row.get("instance_id", "<no instance_id>")), "instance_id", "field required")
    fmt = row_format(row) if fmt == "auto" else fmt
    f2p = _test_ids(row, "FAIL_TO_PASS", instance_id)
    p2p = _test_ids(row, "PASS_TO_PASS", instance_id)
    if not f2p:
        raise BadRow(instance_id, "FAIL_TO_PASS", "empty: a task needs at least one test that the fix makes pass")
    common = {
        "instance_id": instance_id,
        "repo": _text(row, "repo", instance_id),
        "problem_statement": _text(row, "problem_statement", instance_id),
        "FAIL_TO_PASS": f2p,
        "PASS_TO_PASS": p2p,
        "source": f"{fmt}:{source}" if source else fmt,
        **_test_spec(row, instance_id),
    }
    if fmt == "swesmith":
        bug = _text(row, "patch", instance_id)
        image = _text(row, "image_name", instance_id)
        return Task(
            **common,
            image=swesmith_image(image),
            start=StartState(bug_patch=bug, hide_paths=test_files(f2p)),
            gold_patch=reverse_patch(bug),
            alt_fixes=_alt_fixes(row, instance_id),
            test_cmd=test_cmd if test_cmd is not None else SWESMITH_TEST_ENV,
        )
    if fmt == "swebench":
        image = row.get("image_name") or row.get("docker_image") or _swebench_image(instance_id)
        return Task(
            **common,
            image=image,
            start=StartState(base_commit=_text(row, "base_commit", instance_id, required=False) or None),
            gold_patch=_text(row, "patch", instance_id),
            test_patch=_text(row, "test_patch", instance_id),
            test_cmd=test_cmd if test_cmd is not None else SWESMITH_TEST_ENV,
        )
    raise BadRow(instance_id, "format", f"unknown format {fmt!r} (valid: swesmith, swebench)")


def _swebench_image(instance_id: str) -> str:
    """SWE-bench's per-instance image name (`sweb.eval.x86_64.<id with __ as _1776_>`)."""
    return f"swebench/sweb.eval.x86_64.{instance_id.replace('__', '_1776_').lower()}:latest"
