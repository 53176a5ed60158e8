"""Reporting plugin loaded into the verification pytest process (stdlib + pytest only).

Reports every test phase, collection errors, the values of blind checks and an equality probe
as JSON lines on a pipe the runner handed over. It holds nothing worth stealing (no key, no list of controls, no
verdict): this module is as much in reach of the code under test as pytest is, so the
grader believes these records only as far as controls that the code under test cannot tell
from real hidden tests back them up. Python 3.6+.
"""

import builtins
import collections.abc
import contextlib
import gc
import json
import numbers
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


_NOW = [""]
"""The test running now: a blind check's value is filed under it."""


def pytest_runtest_logstart(nodeid, location):
    _NOW[0] = nodeid


_SENT = {}
"""(test, check) -> the encodings sent: a check in a body that runs many times (hypothesis)
sends each distinct value once, and at most `_MOST_VALUES` of them."""
_MOST_VALUES = 20
_VALUE_BYTES = 1 << 20


class _NotPlain(Exception):
    pass


_LOOK_ALIKES = [(collections.abc.Mapping, (dict,)), (collections.abc.Set, (set,)),
                (collections.abc.Sequence, (list, tuple))]
"""Containers that are no builtin ones but compare as one (a UserDict, dict views, a UserList)."""


def _project(value, depth=0):
    """`value` as exact builtin plain data: subclasses as their base (a str enum as its str, a
    namedtuple as a tuple), containers as the builtin one they equal (dict views as sets),
    numeric look-alikes (numpy scalars, Decimal, Fraction) as the int, float or complex they
    equal. Anything else raises `_NotPlain`."""
    if depth > 100:
        raise _NotPlain("data nested too deep")
    if value is None or value is True or value is False:
        return value
    for base in (int, float, complex):
        if isinstance(value, base):
            return base(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        kind = list if isinstance(value, list) else tuple if isinstance(value, tuple) else set
        return kind(_project(v, depth + 1) for v in value)
    if isinstance(value, dict):
        out = {_project(k, depth + 1): _project(v, depth + 1) for k, v in value.items()}
        if len(out) != len(value):
            raise _NotPlain("a mapping whose keys are not plain data")
        return out
    for abc, kinds in _LOOK_ALIKES:
        if isinstance(value, abc):
            for kind in kinds:
                try:
                    plain = kind(value)
                    if bool(value == plain):
                        return _project(plain, depth + 1)
                except Exception:
                    continue
            raise _NotPlain(type(value).__name__)
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "shape", None) == ():
        value = item()  # a numpy-like scalar
        if type(value) in (bool, int, float, complex, str, bytes):
            return value
    if isinstance(value, numbers.Number):
        for kind in (int, float, complex):
            try:
                plain = kind(value)
            except Exception:
                continue
            if plain == value:
                return plain
    text = str(value)
    if bool(value == text):  # an object of the repo's own that equals its own string (a Version equal to "1.0")
        return text
    raise _NotPlain(type(value).__name__)


def _encode(plain):
    """Plain data as JSON that keeps its kinds (a tuple is no list, 1.0 is no 1): `blind.decode`'s input."""
    if plain is None:
        return ["none"]
    kind = type(plain)
    if kind in (bool, int, str):
        return [kind.__name__, plain]
    if kind is float:
        return ["float", repr(plain)]
    if kind is complex:
        return ["complex", repr(plain.real), repr(plain.imag)]
    if kind is bytes:
        return ["bytes", plain.hex()]
    if kind is dict:
        return ["dict", [[_encode(k), _encode(v)] for k, v in plain.items()]]
    return [kind.__name__, [_encode(v) for v in plain]]


_KINDS = {"list": list, "tuple": tuple, "dict": dict, "set": set, "str": str}


def _as_sent(how, value, kind):
    """`value` encoded for the host; `kind`, the expected value's builtin kind where the host
    named one: an object that equals its own projection to that kind is sent as that (a tuple
    subclass equal to lists, compared with a list)."""
    if how == "is":
        return _encode(value) if value is None or value is True or value is False else ["opaque", type(value).__name__]
    cast = _KINDS.get(kind)
    for make in ([lambda: cast(value)] if cast is not None and type(value) is not cast else []) + [lambda: value]:
        try:
            plain = _project(make())
            if bool(value == plain):
                return _encode(plain)
        except Exception:
            continue
    return ["opaque", type(value).__name__]


def _send(number, make):
    try:
        encoded = json.dumps(make())
    except Exception:
        encoded = json.dumps(["opaque", "a value that could not be sent"])
    if len(encoded) > _VALUE_BYTES:
        encoded = json.dumps(["opaque", "a value over 1 MB"])
    sent = _SENT.setdefault((_NOW[0], number), [])
    if encoded not in sent and len(sent) <= _MOST_VALUES:
        sent.append(encoded if len(sent) < _MOST_VALUES else json.dumps(["opaque", "too many values"]))
        _emit({"kind": "seen", "nodeid": _NOW[0], "check": number, "value": json.loads(sent[-1])})


def _seen(number, how, value, kind=None):
    """A blind check (`blind.py`): send the value; the host holds what it should be."""
    _send(number, lambda: _as_sent(how, value, kind))
    return True


class _Raises:
    """A blind `pytest.raises(E, match=...)`: whatever the block raises is caught and sent (its
    class and bases by module and qualified name, its message); the host knows E and the pattern."""

    def __init__(self, number):
        self.number = number

    def __enter__(self):
        return None

    def __exit__(self, kind, error, traceback):
        def raised():
            if kind is None:
                return ["not raised"]
            classes = [[str(getattr(c, "__module__", "")), str(getattr(c, "__qualname__", ""))] for c in kind.__mro__]
            try:
                message = str(error)
            except Exception:
                message = ""
            return ["raised", classes[:64], message[:100000]]
        _send(self.number, raised)
        return True


builtins.__factory_seen__ = _seen
builtins.__factory_raises__ = _Raises


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
