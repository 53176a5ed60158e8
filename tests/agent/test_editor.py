"""The editor over a sandbox's files: view, create, str_replace, insert, undo_edit."""

from __future__ import annotations

import pytest

from factory.agent.editor import Editor


@pytest.fixture
def editor(local) -> Editor:
    return Editor(local)


async def test_view_numbers_lines_and_honours_ranges(editor, local):
    whole = await editor.run({"command": "view", "path": "calc/ops.py"})
    assert (
        whole.splitlines()[0]
        == f"Here's the result of running `cat -n` on {local.workdir}/calc/ops.py:"
    )
    assert "     1\tdef add(a, b):\n     2\t    return a - b\n     3\t" in whole
    part = await editor.run(
        {"command": "view", "path": f"{local.workdir}/calc/ops.py", "view_range": [5, -1]}
    )
    assert part.splitlines()[1:] == ["     5\tdef sub(a, b):", "     6\t    return a - b"]
    assert (
        await editor.run({"command": "view", "path": "calc/ops.py", "view_range": [5, 99]})
    ).endswith("return a - b")
    assert "outside the file's lines 1-6" in await editor.run(
        {"command": "view", "path": "calc/ops.py", "view_range": [9, 10]}
    )
    assert "before its start" in await editor.run(
        {"command": "view", "path": "calc/ops.py", "view_range": [4, 2]}
    )


async def test_view_of_a_directory_lists_two_levels_without_hidden_items(editor, local):
    listing = await editor.run({"command": "view", "path": local.workdir})
    assert f"{local.workdir}/calc/ops.py" in listing
    assert f"{local.workdir}/README.md" in listing
    assert ".git" not in listing


async def test_missing_files_and_binary_files_are_errors_for_the_model(editor, local):
    assert (
        await editor.run({"command": "view", "path": "nope.py"})
        == f"Error: {local.workdir}/nope.py does not exist."
    )
    await local.write_file("blob.bin", b"\xff\xfe\x00")
    assert "not a UTF-8 text file" in await editor.run({"command": "view", "path": "blob.bin"})
    assert "is a directory" in await editor.run(
        {"command": "str_replace", "path": "calc", "old_str": "x", "new_str": "y"}
    )


async def test_str_replace_needs_exactly_one_occurrence(editor, local):
    many = await editor.run(
        {
            "command": "str_replace",
            "path": "calc/ops.py",
            "old_str": "    return a - b\n",
            "new_str": "x",
        }
    )
    assert many.startswith("Error: old_str occurs 2 times") and "(lines 2, 6)" in many
    none = await editor.run(
        {"command": "str_replace", "path": "calc/ops.py", "old_str": "a * b", "new_str": "x"}
    )
    assert none.startswith("Error: old_str did not appear verbatim")
    assert (await local.read_file("calc/ops.py")).count(b"a - b") == 2  # nothing changed

    done = await editor.run(
        {
            "command": "str_replace",
            "path": "calc/ops.py",
            "old_str": "def add(a, b):\n    return a - b",
            "new_str": "def add(a, b):\n    return a + b",
        }
    )
    assert "has been edited" in done and "     2\t    return a + b" in done
    assert (await local.read_file("calc/ops.py")).startswith(b"def add(a, b):\n    return a + b\n")


async def test_insert_at_top_middle_and_end(editor, local):
    await editor.run(
        {"command": "insert", "path": "README.md", "insert_line": 0, "new_str": "# title"}
    )
    await editor.run(
        {"command": "insert", "path": "README.md", "insert_line": 2, "new_str": "end\n"}
    )
    await editor.run({"command": "insert", "path": "README.md", "insert_line": 1, "new_str": "mid"})
    assert await local.read_file("README.md") == b"# title\nmid\ncalc\nend\n"
    assert "outside 0-4" in await editor.run(
        {"command": "insert", "path": "README.md", "insert_line": 9, "new_str": "x"}
    )


async def test_create_refuses_to_overwrite_and_undo_walks_back_each_edit(editor, local):
    assert "already exists" in await editor.run(
        {"command": "create", "path": "README.md", "file_text": "x"}
    )
    assert "created" in await editor.run(
        {"command": "create", "path": "calc/new.py", "file_text": "A = 1\n"}
    )
    await editor.run(
        {"command": "str_replace", "path": "calc/new.py", "old_str": "A = 1", "new_str": "A = 2"}
    )
    await editor.run(
        {"command": "insert", "path": "calc/new.py", "insert_line": 1, "new_str": "B = 3"}
    )
    assert await local.read_file("calc/new.py") == b"A = 2\nB = 3\n"

    assert "undone" in await editor.run({"command": "undo_edit", "path": "calc/new.py"})
    assert await local.read_file("calc/new.py") == b"A = 2\n"
    await editor.run({"command": "undo_edit", "path": "calc/new.py"})
    assert await local.read_file("calc/new.py") == b"A = 1\n"
    assert "removed" in await editor.run({"command": "undo_edit", "path": "calc/new.py"})
    assert "calc/new.py" not in await local.diff()
    assert "no edit of" in await editor.run({"command": "undo_edit", "path": "calc/new.py"})
    assert await local.diff() == ""
