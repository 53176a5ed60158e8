"""The `swesmith` and `swebench` task formats (formats.py registers every format).

    SWE-smith  (patch = the diff that introduces the bug; Python's hidden tests = FAIL_TO_PASS
               files; other languages' test command from swesmith_langs.py)
    SWE-bench / SWE-Gym  (base_commit, patch = gold fix, test_patch = hidden tests; pytest)

A row that does not fit raises `BadRow`, naming the instance and the field at fault.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from factory.records import StartState, Task, TestSpec
from factory.tasks import fields, swesmith_langs
from factory.tasks.fields import BadRow
from factory.tasks.patches import reverse_patch

# SWE-smith's Python images keep the repo's environment in the conda env `testbed`;
# the guard keeps the same default working in images without conda.
SWESMITH_TEST_ENV = (
    "if [ -f /opt/miniconda3/bin/activate ]; then "
    "source /opt/miniconda3/bin/activate && conda activate testbed; fi"
)


def swesmith_image(name: str) -> str:
    """SWE-smith's current image scheme; old `owner__repo` names are mapped to `owner_1776_repo`.

    A name with a registry or namespace of its own (`host:port/ns/name:tag`) keeps them; only a
    bare name is SWE-smith's, under `swebench/`."""
    repository, sep, tag = name.rpartition(":") if ":" in name.rpartition("/")[2] else (name, "", "")
    folder, _, last = repository.rpartition("/")
    return f"{folder or 'swebench'}/{last.replace('__', '_1776_')}{sep}{tag}"


def test_files(node_ids: list[str]) -> list[str]:
    """The files that hold these pytest node ids, in first-seen order."""
    return list(dict.fromkeys(nid.split("::", 1)[0] for nid in node_ids if "::" in nid or nid.endswith(".py")))


def _alt_fixes(row: dict[str, Any], iid: str) -> list[str]:
    """A local task set's other correct fixes (`alt_fixes`: diffs from the start state)."""
    fixes = row.get("alt_fixes") or []
    if not isinstance(fixes, list) or not all(isinstance(f, str) and f.strip() for f in fixes):
        raise BadRow(iid, "alt_fixes", "a list of diffs from the start state")
    return list(fixes)


def _common(row: dict[str, Any], fmt: str, source: str) -> tuple[str, dict[str, Any]]:
    iid = fields.instance_id(row)
    f2p = fields.need_fail_to_pass(fields.test_ids(row, "FAIL_TO_PASS", iid), iid)
    return iid, {
        "instance_id": iid,
        "repo": fields.text(row, "repo", iid),
        "problem_statement": fields.text(row, "problem_statement", iid),
        "FAIL_TO_PASS": f2p,
        "PASS_TO_PASS": fields.test_ids(row, "PASS_TO_PASS", iid),
        "source": f"{fmt}:{source}" if source else fmt,
    }


def swesmith_task(row: dict[str, Any], source: str = "", test_cmd: str | None = None) -> Task:
    """A SWE-smith row of any language: the bug applied at /testbed, the fix its reverse."""
    iid, common = _common(row, "swesmith", source)
    bug = fields.text(row, "patch", iid)
    image = fields.text(row, "image_name", iid)
    language = swesmith_langs.language_of(row, common["FAIL_TO_PASS"], bug, iid)
    python = language == "python"
    tests = _given_tests(row, iid) or (TestSpec() if python else swesmith_langs.test_spec(language, row, bug, iid))
    return Task(
        **common,
        image=swesmith_image(image),
        # Python: the FAIL_TO_PASS files leave the agent's view; other languages' test names
        # (Go `TestX`, cargo `mod::test`) do not say which file holds them.
        start=StartState(bug_patch=bug, hide_paths=test_files(common["FAIL_TO_PASS"]) if python else []),
        gold_patch=reverse_patch(bug),
        alt_fixes=_alt_fixes(row, iid),
        test_cmd=test_cmd if test_cmd is not None else (SWESMITH_TEST_ENV if python else None),
        language=language,
        tests=tests,
    )


def _given_tests(row: dict[str, Any], iid: str) -> TestSpec | None:
    """A row's own `tests` (a local task set says how its tests run), checked as TestSpec."""
    given = row.get("tests")
    if given is None:
        return None
    try:
        return TestSpec.model_validate(given)
    except ValidationError as exc:
        problem = exc.errors(include_input=False)[0]
        where = ".".join(map(str, problem["loc"]))
        raise BadRow(iid, f"tests.{where}" if where else "tests", problem["msg"]) from None


def swebench_task(row: dict[str, Any], source: str = "", test_cmd: str | None = None) -> Task:
    """A SWE-bench / SWE-Gym row (Python): the image's repo at base_commit, tests from test_patch."""
    iid, common = _common(row, "swebench", source)
    image = row.get("image_name") or row.get("docker_image") or _swebench_image(iid)
    return Task(
        **common,
        image=image,
        start=StartState(base_commit=fields.text(row, "base_commit", iid, required=False) or None),
        gold_patch=fields.text(row, "patch", iid),
        test_patch=fields.text(row, "test_patch", iid),
        test_cmd=test_cmd if test_cmd is not None else SWESMITH_TEST_ENV,
    )


def _swebench_image(instance_id: str) -> str:
    """SWE-bench's per-instance image name (`sweb.eval.x86_64.<id with __ as _1776_>`)."""
    return f"swebench/sweb.eval.x86_64.{instance_id.replace('__', '_1776_').lower()}:latest"
