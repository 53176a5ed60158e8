"""The repo's own pytest settings that decide outcomes, carried into the trusted configuration.

The tests run under a trusted `-c` ini with `addopts` cleared (docs/verify.md, step 4): the
repo's configuration may load plugins and code, and a patch must not configure its own judge.
But a few settings make pytest stricter, and a check that replaces pytest's own must never be
weaker than pytest: a repo that turns warnings into errors (`filterwarnings = error`, `-W error`
in `addopts`) fails a patch that warns, and one with `xfail_strict` fails an xfail test that
passes. Those are read here from the configuration file pytest itself would pick for the tests,
at its start state (the policy drops a patch's pytest configuration), and nothing else is: they
name warning categories and a boolean, never code to load.

Which file pytest picks (its `locate_config`): from the tests' common folder up to the repo's
root, in each folder the first of pytest.toml, .pytest.toml, pytest.ini, .pytest.ini,
pyproject.toml, tox.ini, setup.cfg that is a pytest configuration (pytest.ini is one even without
a `[pytest]` section; the others need their section). Folders above the repo are not looked at.
"""

from __future__ import annotations

import configparser
import posixpath
import shlex
import tomllib
from dataclasses import dataclass, field

NAMES = ["pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"]
"""The configuration files pytest looks for in each folder, in the order it takes them."""


@dataclass(frozen=True)
class RepoSettings:
    """What the repo's configuration says of warnings and xfail, as the trusted run states it."""

    filterwarnings: list[str] = field(default_factory=list)
    """The configuration's `filterwarnings` lines, in order."""
    warning_options: list[str] = field(default_factory=list)
    """`-W` values of its `addopts`: pytest applies them after the lines above."""
    xfail_strict: bool = False

    def ini(self) -> str:
        lines = ["[pytest]"]
        if self.filterwarnings:
            lines += ["filterwarnings =", *(f"    {line}" for line in self.filterwarnings)]
        if self.xfail_strict:
            lines.append("xfail_strict = true")
        return "\n".join(lines) + "\n"


def candidates(test_files: list[str]) -> list[str]:
    """Every file pytest might take its configuration from, in the order it looks (repo-relative)."""
    folders = [posixpath.dirname(path) for path in test_files] or [""]
    common = posixpath.commonpath(folders) if all(folders) else ""
    chain = [common]
    while chain[-1]:
        chain.append(posixpath.dirname(chain[-1]))
    return [posixpath.join(folder, name) for folder in chain for name in NAMES]


def repo_settings(files: dict[str, bytes | None]) -> RepoSettings:
    """The settings of the first file of `files` (in `candidates` order) that pytest would take."""
    for path, data in files.items():
        if data is not None and (section := _section(posixpath.basename(path), data.decode(errors="replace"))) is not None:
            return _settings(section)
    return RepoSettings()


def _section(name: str, text: str) -> dict | None:
    """The pytest section of one configuration file, or None when pytest would pass it by."""
    try:
        if name.endswith(".toml"):
            data = tomllib.loads(text)
            return data.get("pytest") if name != "pyproject.toml" else data.get("tool", {}).get("pytest", {}).get(
                "ini_options")
        parser = configparser.ConfigParser(interpolation=None, strict=False, comment_prefixes=("#", ";"))
        parser.read_string(text)
    except (ValueError, configparser.Error):
        return None  # pytest stops on a file it cannot parse: so does the verification, whatever we say
    section = "tool:pytest" if name == "setup.cfg" else "pytest"
    if parser.has_section(section):
        return dict(parser[section])
    return {} if name in ("pytest.ini", ".pytest.ini") else None


def _settings(section: dict) -> RepoSettings:
    addopts = section.get("addopts", [])
    words = addopts if isinstance(addopts, list) else shlex.split(str(addopts), comments=False)
    warning_options, disabled = [], False
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        if word in ("-W", "--pythonwarnings"):
            warning_options.append(following)
        elif word.startswith("--pythonwarnings="):
            warning_options.append(word.split("=", 1)[1])
        elif word.startswith("-W"):
            warning_options.append(word[2:])
        disabled |= (word == "-p" and following == "no:warnings") or word == "-pno:warnings"
    if disabled:  # the warnings plugin is off: pytest applies no filter of its own
        return RepoSettings(xfail_strict=_true(section.get("xfail_strict", False)))
    return RepoSettings(_lines(section.get("filterwarnings", [])), [w for w in warning_options if "\n" not in w],
                        _true(section.get("xfail_strict", False)))


def _lines(value: object) -> list[str]:
    """pytest's `linelist`: a TOML list as it is, an ini value one entry per non-empty line."""
    items = value if isinstance(value, list) else str(value).split("\n")
    return [line for line in (str(item).strip() for item in items) if line and "\n" not in line]


def _true(value: object) -> bool:
    return value is True or str(value).strip().lower() in ("true", "1", "yes", "y", "t", "on")
