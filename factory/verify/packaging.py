"""Packaging files in a patch: a test extra is a requirement, pytest's sections are configuration.

The policy keeps pyproject.toml, setup.cfg and setup.py changes; once the kept part of the
patch is applied, the verifier compares each before and after here, and leaves a file whose
change configures pytest at its start state (flagged): the package is not installed again at
verification, so what such a file says matters to the tests only as configuration, and the
tests run under the task's.
"""

from __future__ import annotations

import configparser
import difflib
import re
import tomllib
from collections.abc import Iterator

TEST_CONFIG_WORDS = re.compile(
    r"pytest|addopts|testpaths|python_files|python_classes|python_functions|required_plugins|confcutdir|norecursedirs",
    re.I,
)
REQUIREMENT_KEYS = [
    ("project", "dependencies"), ("project", "optional-dependencies"), ("build-system", "requires"),
    ("dependency-groups",), ("tool", "poetry", "dependencies"), ("tool", "poetry", "dev-dependencies"),
    ("tool", "poetry", "group", "*", "dependencies"), ("tool", "pdm", "dev-dependencies"),
    ("tool", "hatch", "envs", "*", "dependencies"), ("tool", "hatch", "envs", "*", "extra-dependencies"),
    ("options", "install_requires"), ("options", "tests_require"), ("options", "setup_requires"),
    ("options.extras_require",),
]
"""Requirement lists in packaging metadata: a test extra there is not test configuration."""
REQUIREMENT_STRING = re.compile(
    r"""(["'])\s*pytest(?:[-_.][A-Za-z0-9_.-]*)?\s*(?:\[[^\]"'\n]*\])?\s*(?:(?:[<>=!~]=?|;|@)[^"'\n]*)?\1"""
)
"""A quoted requirement on pytest or a plugin (`"pytest-cov>=4"`); `"pytest11"` is not one."""


def packaging_configuration(path: str, before: bytes | None, after: bytes | None) -> str | None:
    """Why the change of a packaging file is test configuration, or None.

    pyproject.toml and setup.cfg are compared as data: a changed key of pytest's own
    (`[tool.pytest.ini_options]`, `[tool:pytest]`, a `pytest11` entry point) is; other
    tools' settings that merely name pytest (`[tool.uv] dev-dependencies`, a mypy override for
    `_pytest.*`) and requirement lists (a `test` extra) do not. setup.py, and a file that does
    not parse, is compared line by line, requirement strings left out.
    """
    old, new = (b.decode(errors="replace") if b is not None else "" for b in (before, after))
    name, changed = path.rsplit("/", 1)[-1], None
    if name == "pyproject.toml":
        changed = _data_changes(_toml, old, new)
    elif name == "setup.cfg":
        changed = _data_changes(_ini, old, new)
    if changed is None:
        changed = list(_line_changes(old, new))
    for text in changed:
        if TEST_CONFIG_WORDS.search(text):
            return f"{path}: {text[:120]}"
    return None


def _data_changes(parse, old: str, new: str) -> list[str] | None:
    try:
        before, after = parse(old), parse(new)
    except (ValueError, configparser.Error):
        return None
    keys = [k for k in before.keys() | after.keys() if before.get(k) != after.get(k) and not _is_requirements(k)
            and any("pytest" in part.lower() for part in k)]
    return [f"{'.'.join(k)} = {before.get(k)!r} -> {after.get(k)!r}" for k in sorted(keys)]


def _toml(text: str) -> dict[tuple[str, ...], object]:
    return dict(_flatten(tomllib.loads(text)))


def _flatten(value: object, key: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], object]]:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from _flatten(v, (*key, str(k)))
    else:
        yield key, value


def _ini(text: str) -> dict[tuple[str, ...], object]:
    parser = configparser.RawConfigParser(strict=False)
    parser.read_string(text)
    return {(section, key): value for section in parser.sections() for key, value in parser.items(section)}


def _is_requirements(key: tuple[str, ...]) -> bool:
    return any(len(key) >= len(p) and all(a in ("*", b) for a, b in zip(p, key, strict=False)) for p in REQUIREMENT_KEYS)


def _line_changes(old: str, new: str) -> Iterator[str]:
    """Changed lines, each with the [section] it sits in, requirement strings left out."""
    a, b = old.split("\n"), new.split("\n")
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for lines, start, end in ((a, i1, i2), (b, j1, j2)):
            for index in range(start, end):
                yield _section_of(lines, index) + " " + REQUIREMENT_STRING.sub("", lines[index])


def _section_of(lines: list[str], index: int) -> str:
    for line in reversed(lines[: index + 1]):
        if line.lstrip().startswith("["):
            return line.strip()
    return ""
