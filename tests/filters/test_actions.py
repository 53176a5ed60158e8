import json

import pytest

from factory.filters import actions, normalize_arguments, normalize_patch
from tests.filters.attempt_builder import bash, patch_for, trajectory, view


def test_whitespace_and_key_order_do_not_make_a_new_action():
    a = normalize_arguments("bash", json.dumps({"command": "python   -m pytest\n  tests"}))
    b = normalize_arguments("bash", '{"command":"python -m pytest tests"}')
    assert a == b


def test_view_range_is_ignored_for_views_only():
    first = normalize_arguments("str_replace_editor", json.dumps(view("/testbed/a.py", [1, 50])[1]))
    second = normalize_arguments("str_replace_editor", json.dumps(view("/testbed/./a.py", [51, 100])[1]))
    assert first == second
    insert = {"command": "insert", "path": "/testbed/a.py", "insert_line": 3, "new_str": "x"}
    assert normalize_arguments("str_replace_editor", json.dumps(insert)) != normalize_arguments(
        "str_replace_editor", json.dumps({**insert, "insert_line": 4})
    )


def test_sed_line_ranges_are_paging_too():
    a = normalize_arguments("bash", json.dumps({"command": "sed -n '1,40p' src/a.py"}))
    b = normalize_arguments("bash", json.dumps({"command": "sed -n '41,80p' src/a.py"}))
    c = normalize_arguments("bash", json.dumps({"command": "sed -n '41,80p' src/b.py"}))
    assert a == b != c


def test_invalid_json_arguments_are_compared_as_text():
    assert normalize_arguments("bash", '{"command": "ls"  ') == '{"command": "ls"'


def test_actions_come_from_assistant_tool_calls_in_order():
    traj = trajectory([bash("ls"), view("/a.py"), bash("pytest")])
    assert [a.split(" ", 1)[0] for a in actions(traj)] == ["bash", "str_replace_editor", "bash"]
    assert len(actions(traj)) == 3


@pytest.mark.parametrize(
    "variant",
    [
        patch_for("return 2").replace("    return 2", "  return 2"),  # indentation
        patch_for("return 2").replace("return 2", "return  2 "),  # inner and trailing spaces
        patch_for("return 2").replace("index 1111111..2222222", "index abcdef0..1234567"),
        patch_for("return 2").replace("@@ -1,3 +1,3 @@", "@@ -1,3 +1,4 @@") + "+\n",  # a blank line added
    ],
)
def test_patches_differing_only_in_whitespace_normalize_equal(variant):
    assert normalize_patch(variant) == normalize_patch(patch_for("return 2"))


def test_different_code_is_a_different_patch():
    assert normalize_patch(patch_for("return 2")) != normalize_patch(patch_for("return 3"))
