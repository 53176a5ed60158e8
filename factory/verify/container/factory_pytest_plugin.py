"""Reporting plugin loaded into the verification pytest process (stdlib + pytest only).

Reports every test phase, collection errors and an equality probe as JSON lines on a pipe
the runner handed over. It holds nothing worth stealing (no key, no list of controls, no
verdict): this module is as much in reach of the code under test as pytest is, so the
grader believes these records only as far as controls that the code under test cannot tell
from real hidden tests back them up. Python 3.6+.
"""

import builtins
import contextlib
import gc
import json
import os
import sys

_FD = int(os.environ.pop("FACTORY_REPORT_FD"))
_TOUCHED = json.loads(os.environ.pop("FACTORY_TOUCHED", "[]"))
_WORKDIR = os.environ.pop("FACTORY_WORKDIR", os.getcwd())


_MADE = []
"""Classes made by a `class` statement since this plugin loaded that define `__eq__`,
kept so the probe sees them: a class made inside a function is garbage by the session's end."""
_build_class = builtins.__build_class__


def _keeping(*args, **kwargs):
    cls = _build_class(*args, **kwargs)
    if isinstance(cls, type) and "__eq__" in cls.__dict__ and len(_MADE) < 10000:
        _MADE.append(cls)
    return cls


builtins.__build_class__ = _keeping


def _emit(record):
    os.write(_FD, json.dumps(record, sort_keys=True).encode() + b"\n")


_FAILED_AT = {}
"""nodeid -> the line of the test's own file at which its body raised (the innermost frame of the
test function): validation's run of the empty patch tells the controls where the bug strikes."""


def pytest_runtest_makereport(item, call):
    code = getattr(getattr(item, "function", None), "__code__", None)
    if call.when == "call" and call.excinfo is not None and code is not None:
        lines = [entry.lineno + 1 for entry in call.excinfo.traceback if entry.frame.code.raw is code]
        if lines:
            _FAILED_AT[item.nodeid] = lines[-1]


def pytest_runtest_logreport(report):
    record = {"kind": "test", "nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
              "xfail": hasattr(report, "wasxfail")}
    if report.when == "call" and report.nodeid in _FAILED_AT:
        record["line"] = _FAILED_AT.pop(report.nodeid)
    _emit(record)


def pytest_collectreport(report):
    if report.failed:
        _emit({"kind": "collect_error", "nodeid": report.nodeid, "detail": str(report.longrepr)[-2000:]})


class _Probe:
    """Stands for "any other object": unique, and with state of its own, so that an honest
    `__eq__` comparing attributes or `__dict__` says no to it."""

    def __init__(self, token):
        self.token = token


class _Self:
    """A stand-in `self` for an `__eq__` called without an instance of its class."""


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made at run time (by `class`, `type()` or an extension)


def _code_file(method):
    """The file whose code a method runs, through bound methods, wrappers and partials ('' for C)."""
    for _ in range(8):
        code = getattr(method, "__code__", None)
        if code is not None:
            return code.co_filename
        method = getattr(method, "__func__", None) or getattr(method, "__wrapped__", None) or getattr(method, "func", None)
        if method is None:
            break
    return ""


def _defined_where_it_says(cls, method, touched):
    """True for a method written in its own class's body, in a file the patch left alone: the
    class is found by its module and qualified name, and the method's code is in that module's
    file. Such code is the repo or its environment as it was; anything else (a class in a file
    the patch touched, a renamed `__module__`, a method put on a class from elsewhere) is probed."""
    module = sys.modules.get(getattr(cls, "__module__", None) or "")
    found = module
    for part in (getattr(cls, "__qualname__", "") or "").split("."):
        found = getattr(found, part, None)
    source = getattr(module, "__file__", None) or ""
    return found is cls and bool(source) and source not in touched and _code_file(method) == source


def _probes():
    token = os.urandom(8).hex()
    number = int(token, 16)
    return [_Probe(token), token, number + 2 ** 70, number / 7.0, token.encode(), (token,), [token], {token: number},
            frozenset([token])]


class _Unset:
    """The value a blank instance holds where its class has a plain default: state of its own,
    as `__init__` would have set it, not the `None` that `getattr(other, name, None)` also gives."""


_PLAIN = (type(None), bool, int, float, complex, str, bytes, tuple, frozenset)


def _blank(cls):
    """An instance made without `__init__`, or a stand-in when `__new__` wants arguments.

    Its class's plain defaults (`key = None`, `name: str = ""`) are shadowed by unique values,
    so that an honest `self.key == getattr(other, "key", None)` does not read as equal to
    anything."""
    for make in (object.__new__, cls.__new__):
        try:
            blank = make(cls)
        except Exception:
            continue
        for klass in cls.__mro__[:-1]:
            for name, value in list(vars(klass).items()):
                if not name.startswith("__") and isinstance(value, _PLAIN):
                    with contextlib.suppress(Exception):  # slots, frozen: the default stays
                        object.__setattr__(blank, name, _Unset())
        return blank
    return _Self()


def _says_yes(cls, selves, probes):
    """Whether `self == probe` is true for any of them, `__eq__` bound as Python binds it."""
    method = cls.__dict__["__eq__"]
    for self in selves:
        for probe in probes:
            try:
                bound = method.__get__(self, cls) if hasattr(type(method), "__get__") else method
                answer = bound(probe)
                if answer is not NotImplemented and bool(answer):
                    return True
            except Exception:
                continue
    return False


def _always_equal_classes():
    """Classes whose `__eq__` says yes to an object made up on the spot (a fresh string, number,
    bytes, container or plain object).

    Probed: every class made at run time whose `__eq__` is not its own, unchanged code (see
    `_defined_where_it_says`), with an instance made without `__init__`, with instances alive
    in the process, or with a stand-in `self` (for classes whose `__new__` needs arguments).
    (`__ne__` is not probed: an honest `__ne__` is also "unequal" to everything made up, and
    old code's `not self.__eq__(o)` says "not unequal" to everything.)"""
    touched = {os.path.join(_WORKDIR, p) for p in _TOUCHED}
    objects = gc.get_objects()
    suspects = set()
    for obj in [*objects, *_MADE]:
        if isinstance(obj, type) and obj.__flags__ & _HEAP_TYPE and "__eq__" in obj.__dict__ \
                and not _defined_where_it_says(obj, obj.__dict__["__eq__"], touched):
            suspects.add(obj)
    alive = {}
    for obj in objects:
        kind = type(obj)
        if kind in suspects and len(alive.setdefault(kind, [])) < 3:
            alive[kind].append(obj)
    probes, found = _probes(), []
    for cls in suspects:
        if _says_yes(cls, [*alive.get(cls, []), _blank(cls)], probes):
            found.append(f"{cls.__module__}.{cls.__qualname__}.__eq__")
    return sorted(found)


def pytest_collection_finish(session):
    _emit({"kind": "collected", "count": len(session.items), "always_equal": _always_equal_classes()})


def pytest_sessionfinish(session, exitstatus):
    _emit({"kind": "done", "exitstatus": int(exitstatus), "always_equal": _always_equal_classes()})
