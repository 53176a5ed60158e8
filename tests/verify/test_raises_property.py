"""The host's judgement of a blind `pytest.raises` agrees with real `pytest.raises`.

Hypothesis builds a small package (its error classes, with single and multiple inheritance),
code that raises either one of them or something merely named like one (a class made by
`type()`, the same name defined again in another module, a lying `__qualname__` or
`__module__`, a look-alike of a builtin that does not derive from it), and tests that expect a
class by the names a test file uses (`E`, `errors.E`, an alias, a builtin). Each test runs twice
in one real pytest session under the reporting plugin: as written (`pytest.raises`, pytest
judges) and rewritten blind (`blind.rewrite`; the plugin sends, the host judges with the repo's
class tree as the verifier reads it). The two must agree on every one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factory.verify import blind, classes

PLUGIN = Path(__file__).parents[2] / "factory/verify/container"
NAMES = ["ParseError", "ScanError", "ValueError", "KeyError"]
"""Names a class of the package may have: two of its own, two a builtin has."""


OWN = ["BaseError", "ParseError", "ScanError", "BothError"]


def package(parse_bases: str, scan_bases: str) -> dict[str, str]:
    """The package's files: its errors (ParseError and ScanError on the bases given), a module
    that raises each of them and each name-alike (`lib.<how>_<name>()`)."""
    errors = ["class BaseError(Exception):\n    pass\n", f"class ParseError({parse_bases}):\n    pass\n",
              f"class ScanError({scan_bases}):\n    pass\n", "class BothError(ParseError, ScanError):\n    pass\n"]
    raisers = {  # what the code under test raises: the real thing, or a name-alike
        **{f"real_{n}": f"raise errors.{n}('x')" for n in OWN},
        **{f"builtin_{n}": f"raise {n}('x')" for n in ("ValueError", "KeyError", "LookupError", "TypeError")},
        **{f"typed_{n}": f"raise type({n!r}, (Exception,), {{}})('x')" for n in NAMES},
        **{f"typed_module_{n}": f"raise type({n!r}, (Exception,), {{'__module__': {m!r}}})('x')"
           for n in NAMES for m in ("pkg.errors", "builtins")},
        **{f"other_{n}": f"raise other.{n}('x')" for n in NAMES},
        **{f"lying_{n}": f"raise lying.Liar_{n}('x')" for n in NAMES},
        "sub_of_real": "raise other.Sub('x')",
    }
    other = "".join(f"class {n}(Exception):\n    pass\n\n\n" for n in NAMES) + "class Sub(errors.ParseError):\n    pass\n"
    lying = "".join(f"class Liar_{n}(Exception):\n    __qualname__ = {n!r}\n    __module__ = 'pkg.errors'\n\n\n"
                    for n in NAMES)
    lib = "from pkg import errors, other, lying\n\n\n" + "".join(
        f"def {name}():\n    {code}\n\n\n" for name, code in raisers.items())
    return {
        "pkg/__init__.py": "from pkg.errors import *  # noqa\n",
        "pkg/errors.py": "\n\n".join(errors),
        "pkg/other.py": "from pkg import errors\n\n\n" + other,
        "pkg/lying.py": lying,
        "pkg/lib.py": lib,
    }


def raisers(files: dict[str, str]) -> list[str]:
    return [line[4:].split("(")[0] for line in files["pkg/lib.py"].splitlines() if line.startswith("def ")]


EXPECTS = ["ParseError", "ScanError", "BaseError", "BothError", "errors.ParseError", "errors.ScanError", "PE",
           "ValueError", "KeyError", "LookupError", "Exception", "TypeError"]
"""What a test may expect, as a test file writes it."""


@st.composite
def packages(draw) -> tuple[dict[str, str], list[str]]:
    """The package's files, on drawn bases, and test functions (source) that raise and expect."""
    files = package(draw(st.sampled_from(["BaseError", "ValueError", "BaseError, ValueError"])),
                    draw(st.sampled_from(["BaseError", "LookupError", "Exception", "KeyError, BaseError"])))
    picked = draw(st.lists(st.tuples(st.sampled_from(raisers(files)), st.sampled_from(EXPECTS)), min_size=8, max_size=24))
    return files, [f"def test_{i}():\n    with pytest.raises({expected}):\n        lib.{raiser}()\n"
                   for i, (raiser, expected) in enumerate(picked)]


HEAD = "import pytest\n\nfrom pkg import lib, errors\nfrom pkg import BaseError, BothError, ParseError, ScanError\n" \
       "from pkg.errors import ParseError as PE\n\n\n"


def pytest_and_host(tmp: Path, files: dict[str, str], tests: list[str]) -> list[tuple[str, bool, bool]]:
    """Each test: (its source, pytest's verdict on it as written, the host's on it made blind)."""
    for path, text in files.items():
        (tmp / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp / path).write_text(text)
    real = HEAD + "\n\n".join(tests)
    made_blind, expected = blind.rewrite({"test_blind.py": real}, [{f"test_blind.py::test_{i}"} for i in range(len(tests))])
    (tmp / "test_real.py").write_text(real)
    (tmp / "test_blind.py").write_text(made_blind["test_blind.py"])
    assert len(expected) == len(tests)  # every block is blind
    report = tmp / "records.jsonl"
    with report.open("wb") as out:
        env = {**os.environ, "FACTORY_REPORT_FD": str(out.fileno()), "PYTHONPATH": f"{PLUGIN}{os.pathsep}{tmp}",
               "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "factory_pytest_plugin", "-p", "no:cacheprovider",
                        "-c", os.devnull, "--rootdir", str(tmp), "test_real.py", "test_blind.py"], cwd=tmp, env=env,
                       pass_fds=(out.fileno(),), capture_output=True, timeout=120)
    records = [json.loads(line) for line in report.read_text().splitlines()]
    assert not [r for r in records if r["kind"] == "altered"], records
    outcome = {r["nodeid"]: r["outcome"] for r in records if r["kind"] == "test" and r["when"] == "call"}
    sent: dict[str, dict[int, list]] = {}
    for r in records:
        if r["kind"] == "seen":
            sent.setdefault(r["nodeid"], {}).setdefault(r["check"], []).append(r["value"])
    listing = subprocess.run(["sh", "-c", classes.COMMAND.replace(classes.LISTING, str(tmp / "classes"))], cwd=tmp,
                             check=True)
    tree = classes.Classes.parse((tmp / "classes").read_text())
    out = []
    for i, test in enumerate(tests):
        host = blind.judge(sent.get(f"test_blind.py::test_{i}", {}), expected[f"test_blind.py::test_{i}"], "", tree)
        out.append((test, outcome[f"test_real.py::test_{i}"] == "passed", host is None))
    assert listing.returncode == 0
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(packages())
def test_the_host_judges_a_blind_raises_block_as_pytest_raises_does(tmp_path_factory, drawn):
    files, tests = drawn
    for test, by_pytest, by_host in pytest_and_host(tmp_path_factory.mktemp("raises"), files, tests):
        assert by_pytest == by_host, (test, by_pytest, by_host)


def test_name_alikes_are_refused_and_the_real_classes_accepted(tmp_path):
    """The cases the property draws from, once each: no look-alike passes, every real one does."""
    files = package("BaseError, ValueError", "LookupError")
    names = raisers(files)
    tests = [f"def test_{i}():\n    with pytest.raises({'ParseError' if 'Parse' in r or r == 'sub_of_real' else 'ValueError'}):"
             f"\n        lib.{r}()\n" for i, r in enumerate(names)]
    verdicts = dict(zip(names, [(p, h) for _, p, h in pytest_and_host(tmp_path, files, tests)], strict=True))
    assert all(p == h for p, h in verdicts.values()), verdicts
    assert not any(host for name, (_, host) in verdicts.items() if name.startswith(("typed_", "other_", "lying_")))
    assert verdicts["real_ParseError"][1] and verdicts["sub_of_real"][1] and verdicts["builtin_ValueError"][1]
