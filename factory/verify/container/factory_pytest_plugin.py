"""Reporting plugin loaded into the verification pytest process (stdlib + pytest only).

Reports every test phase, collection errors, the values of blind checks, an equality probe and
what it saw altered of the test machinery (`_watch`) as JSON lines on a pipe the runner handed over. It holds nothing worth stealing (no key, no list of controls, no
verdict): this module is as much in reach of the code under test as pytest is, so the
grader believes these records only as far as controls that the code under test cannot tell
from real hidden tests back them up. Python 3.6+.
"""

import builtins
import collections.abc
import contextlib
import gc
import itertools
import json
import numbers
import operator
import os
import sys
import types

import pytest

_MACHINERY = ("_pytest.reports", "_pytest.runner", "_pytest.python", "_pytest.main", "_pytest.outcomes",
              "_pytest.skipping", "_pytest.unittest", "_pytest.nodes", "_pytest.fixtures", "_pytest.python_api",
              "_pytest.raises", "pluggy._callers", "pluggy._hooks", "pluggy.callers", "pluggy.hooks",
              "pluggy._manager", "pluggy.manager", "pytest")
"""Modules whose functions and classes make and carry test reports (the names of several pytest
and pluggy versions): watched from this plugin's load (`_watch`)."""
for _name in _MACHINERY:
    with contextlib.suppress(Exception):
        __import__(_name)  # each one this pytest has, loaded before any test file is

_FD = int(os.environ.pop("FACTORY_REPORT_FD"))
_TOUCHED = json.loads(os.environ.pop("FACTORY_TOUCHED", "[]"))
_CHANGED = json.loads(os.environ.pop("FACTORY_CHANGED", "{}"))
"""The lines of each touched file the patch added or removed at ([first, last] spans); a touched
file it does not name changed everywhere."""
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


def _private():
    """This plugin's state, held in closures rather than by module name: what the code under test
    would have to change to forge a record is not one attribute lookup away (`sys.modules`).

    Each record carries the next number of a sequence (`seq`) that only `emit` counts; the host
    wants 0, 1, 2, ...: a record written to the pipe by other code, or one suppressed, breaks it.
    `emit` answers only this module's own functions; a call from elsewhere is itself reported."""
    sequence = [0]
    state = {"now": "", "sent": {}, "counts": {}, "item": (None, (), False), "frames": set(), "bindings": {}}
    write, dumps, getframe = os.write, json.dumps, sys._getframe  # bound now: rebinding them later changes nothing
    fstat, kill, getpid = os.fstat, os.kill, os.getpid
    pipe = fstat(_FD)
    pipe = (pipe.st_dev, pipe.st_ino)
    """The report pipe as the runner handed it over, before any code of the repo ran."""

    def same_pipe():
        now = fstat(_FD)
        return (now.st_dev, now.st_ino) == pipe

    def foreign():
        """The caller's caller, when it is no code of this module's."""
        code = getframe(2).f_code
        return code if _OWN_CODES and code not in _OWN_CODES else None

    def emit(record):
        caller = foreign()
        if caller is not None:
            record = {"kind": "altered", "nodeid": state["now"],
                      "what": [f"a record written by {caller.co_name}, not by the reporting plugin"]}
        record = dict(record, seq=sequence[0])
        sequence[0] += 1
        line = dumps(record, sort_keys=True).encode() + b"\n"
        # Another pipe put over the report fd (`dup2`) would carry every record to code that
        # forwards them changed, sequence kept, nothing of Python's rebound. Looked at before
        # and after each write; when it moved, no record can be trusted to reach the runner (its
        # other fds may be taken too), so the process ends here without its `done`: no verdict.
        if not same_pipe():
            kill(getpid(), 9)
        write(_FD, line)
        if not same_pipe():
            kill(getpid(), 9)

    def get(key, value=_KEEP):
        """`state[key]`; with a value, set it first. Only for this module's code."""
        caller = foreign()
        if caller is not None:
            emit({"kind": "altered", "nodeid": state["now"],
                  "what": [f"the reporting plugin's state reached by {caller.co_name}"]})
            raise RuntimeError("not yours")
        if value is not _KEEP:
            state[key] = value
        return state[key]

    return emit, get


_KEEP = object()
_emit, _state = _private()
_OWN_CODES = set()
"""The code objects of this module's functions (filled at the end of the module)."""


def pytest_runtest_logstart(nodeid, location):
    _state("now", nodeid)


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
    key = (_state("now"), number)
    sent = _state("sent").setdefault(key, [])
    if len(sent) != _state("counts").get(key, 0):  # filled or emptied by other code: its values would stand in for this one's
        _altered([f"the record of blind check {number}'s values was changed"])
    if encoded not in sent and len(sent) <= _MOST_VALUES:
        sent.append(encoded if len(sent) < _MOST_VALUES else json.dumps(["opaque", "too many values"]))
        _state("counts")[key] = len(sent)
        _emit({"kind": "seen", "nodeid": key[0], "check": number, "value": json.loads(sent[-1])})


_getframe = sys._getframe


def _codes(obj):
    """The code objects a test's function runs as, through bound methods and `functools.wraps` wrappers."""
    found = []
    for _ in range(16):
        code = getattr(obj, "__code__", None)
        if code is not None:
            found.append(code)
        obj = getattr(obj, "__func__", None) or getattr(obj, "__wrapped__", None)
        if obj is None:
            break
    return tuple(found)


def _same_function(code, item):
    """A test's own function behind a decorator that keeps no `__wrapped__`: its name, in its file."""
    name = getattr(item, "originalname", None) or str(getattr(item, "name", "")).partition("[")[0]
    path = str(getattr(item, "fspath", "") or getattr(item, "path", ""))
    return code.co_name == name and bool(path) and os.path.abspath(code.co_filename) == os.path.abspath(path)


def _called_from_the_test(frame):
    """Why a blind check's call did not come straight from its own test's body, run once by pytest,
    or None. A check is a top-level statement of the test function, so the frame that calls the
    stand-in runs that function's code; a wrapper, a subclass or a second run of the function (the
    code under test calling it again with other arguments) shows as another caller or another frame."""
    item, codes, many = _state("item")  # a tuple: replaced only by `pytest_runtest_protocol`
    frames = _state("frames")
    if item is None:
        return "a blind check ran outside any test"
    if frame.f_code not in codes and not _same_function(frame.f_code, item):
        return f"a blind check of {item.nodeid} was called from {frame.f_code.co_name}, not from its test"
    frames.add(frame)
    if len(frames) > 1 and not many:
        return f"the body of {item.nodeid} ran more than once in its test"
    return None


def _seen(number, how, value, kind=None):
    """A blind check (`blind.py`): send the value; the host holds what it should be."""
    misuse = _called_from_the_test(_getframe(1))
    if misuse:
        _altered([misuse])
        return True
    _watch()
    _send(number, lambda: _as_sent(how, value, kind))
    return True


def _bindings(scope):
    """The classes a test's `pytest.raises(E)` could name, as its module's names are bound now:
    (expression, class) for `E`, `mod.E`, `pkg.mod.E`, and the builtins as they were when this
    plugin loaded where the module does not shadow them. Taken for every test module once
    collection has ended, before any test runs (`pytest_collection_finish`): `pytest.raises(E)`
    evaluates E before its block, so what the code under test rebinds while tests run (the test
    module's names, reached through a frame or `sys.modules`) changes nothing; what it rebinds as
    the modules are imported, pytest would see too."""
    found, seen, queue, budget = [], set(), [("", scope)], 200000
    while queue and budget > 0:
        prefix, names = queue.pop(0)
        for name, value in list(names.items()):
            budget -= 1
            if isinstance(value, type):
                found.append((prefix + name, value))
            if isinstance(value, types.ModuleType) and id(value) not in seen and prefix.count(".") < 2:
                seen.add(id(value))
                queue.append((prefix + name + ".", vars(value)))
    found += [(name, value) for name, value in _BUILTINS.items() if name not in scope and isinstance(value, type)]
    return found


def _in_reach(kind, bound):
    """What of `bound` (`_bindings`) a raised class derives from, as `pytest.raises` would accept
    it: each expression with the index of that base in the class's MRO (-1 where a metaclass's
    `__subclasscheck__` says so). Found by identity: a class made elsewhere under the same name
    (by `type()`, in another module, with a lying `__qualname__`) is not the one bound."""
    mro = _MRO(kind)
    index = {id(c): i for i, c in enumerate(mro)}
    found = {}
    for name, value in bound:
        if id(value) in index:
            found.setdefault(name, index[id(value)])
        elif type(value) is not type and issubclass(value, BaseException):
            with contextlib.suppress(Exception):
                if issubclass(kind, value):
                    found.setdefault(name, -1)
    return sorted([name, i] for name, i in found.items())


_BUILTINS = dict(vars(builtins))
"""The builtins as they were when this plugin loaded, before any repo code ran."""
_MRO = type.__dict__["__mro__"].__get__  # the MRO a class really has, whatever its metaclass says


def _found_where_it_says(cls):
    module = sys.modules.get(str(getattr(cls, "__module__", "")))
    for part in str(getattr(cls, "__qualname__", "")).split("."):
        module = getattr(module, part, None)
    return module is cls


class _Raises:
    """A blind `pytest.raises(E, match=...)`: whatever the block raises is caught and sent (its
    class and bases by module and qualified name, whether each is found where it says, what of the
    test module's names it derives from, its message); the host knows E and the pattern."""

    def __init__(self, number):
        self.number = number
        self.bound = None

    def __enter__(self):
        scope = _getframe(1).f_globals
        # the test module's names as collection left them, before any test ran
        self.bound = _state("bindings").get(id(scope)) or _bindings(scope)
        return None

    def __exit__(self, kind, error, traceback):
        frame = _getframe(1)
        misuse = "the raises stand-in was subclassed" if type(self) is not _Raises else \
            "the raises stand-in was left without entering its block" if self.bound is None else _called_from_the_test(frame)
        if misuse:
            _altered([misuse])
            return True
        _watch()

        def raised():
            if kind is None:
                return ["not raised"]
            classes = [[str(getattr(c, "__module__", "")), str(getattr(c, "__qualname__", "")), _found_where_it_says(c)]
                       for c in _MRO(kind)]
            try:
                message = str(error)
            except Exception:
                message = ""
            return ["raised", classes[:64], message[:100000], _in_reach(kind, self.bound)]
        _send(self.number, raised)
        return True


builtins.__factory_seen__ = _seen
builtins.__factory_raises__ = _Raises


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    obj = getattr(item, "obj", None)
    _state("item", (item, _codes(obj), getattr(obj, "hypothesis", None) is not None))
    _state("frames", set())


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
    _watch()
    item = _state("item")[0]
    if item is not None and report.nodeid == item.nodeid:
        _overridden(item)
    if report.when == "teardown":
        _state("item", (None, (), False))
        _state("frames", set())
    record = {"kind": "test", "nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
              "xfail": hasattr(report, "wasxfail")}
    if report.when == "call" and report.nodeid in _FAILED_AT:
        record["line"] = _FAILED_AT.pop(report.nodeid)
    _emit(record)


def pytest_collectreport(report):
    if report.failed:
        _emit({"kind": "collect_error", "nodeid": report.nodeid, "detail": str(report.longrepr)[-2000:]})


# ---------------------------------------------------------------- the machinery, watched
# What decides a verdict in this process: pytest's report, runner and hook objects, this module and
# the builtins it puts or uses. Their identities are taken as this module loads (before any test
# file or repo code is imported) and compared at every check, every report and the session's end;
# anything changed, restored or not, is sent as an `altered` record, which the host counts as
# tampering. A correct fix has no reason to change any of them.

_HOOKS = ("pytest_runtest_protocol", "pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown",
          "pytest_runtest_makereport", "pytest_runtest_logreport", "pytest_pyfunc_call", "pytest_report_teststatus",
          "pytest_runtest_logstart", "pytest_collection_finish", "pytest_sessionfinish", "pytest_collectreport")
"""Hooks whose implementations decide what a test's report says or whether this module hears of it."""


def _take():
    """Everything watched: (what, a namespace, a key, the object bound there now), and (what, a
    class's namespace, None, how many names it holds) for classes, so an attribute added is seen."""
    taken = []
    for name in _MACHINERY:
        module = sys.modules.get(name)
        if module is None:
            continue
        for key, value in list(vars(module).items()):
            if isinstance(value, (types.FunctionType, type)) and getattr(value, "__module__", None) == name:
                taken.append((f"{name}.{key}", vars(module), key, value))
                if isinstance(value, type):
                    space = vars(value)
                    taken.extend((f"{name}.{key}.{k}", space, k, v) for k, v in list(space.items()))
                    if name in ("_pytest.reports", "_pytest.runner"):  # others gain caches as pytest runs
                        taken.append((f"{name}.{key} (its attributes)", space, None, len(space)))
    me = globals()
    taken.extend(("plugin." + k, me, k, v) for k, v in list(me.items()) if not k.startswith("__"))
    taken.extend(("builtins." + n, vars(builtins), n, vars(builtins).get(n)) for n in _USED_BUILTINS)
    for fn in (_seen, _send, _emit, _in_reach, _called_from_the_test, _watch, _moved, _changed, _altered, _take,
               _impls, _hooks_now, _same, _Raises.__exit__, _Raises.__init__):
        for attribute in ("__code__", "__defaults__", "__kwdefaults__", "__closure__", "__globals__"):
            taken.append((f"plugin code {fn.__name__}.{attribute}", fn, attribute, getattr(fn, attribute)))
    return taken


_MISSING = object()


def _changed(taken):
    out = []
    for what, space, key, value in taken:
        if key is None:
            if len(space) != value:
                out.append(what)
        elif isinstance(space, dict) or type(space).__name__ == "mappingproxy":
            if space.get(key, _MISSING) is not value:
                out.append(what)
        elif getattr(space, key, _MISSING) is not value:
            out.append(what)
    return out


def _own_codes():
    """Every code object of this module's functions, methods and the functions nested in them."""
    codes = []
    for value in list(globals().values()):
        for fn in [value, *(vars(value).values() if isinstance(value, type) else ())]:
            fn = getattr(fn, "__func__", fn)
            if isinstance(fn, types.FunctionType) and fn.__module__ == __name__:
                codes.append(fn.__code__)
    found = set()
    while codes:
        code = codes.pop()
        found.add(code)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return found


def _used_builtins():
    """The builtins this module's code reads (it looks them up as it runs), and the ones it puts there."""
    names = {"__factory_seen__", "__factory_raises__", "__build_class__"}
    for code in _own_codes():
        names.update(n for n in code.co_names if n in vars(builtins))
    return sorted(names)


_BASE = []
"""What `_take` gave as the plugin loaded."""
_FLAT = []
"""`_BASE` laid out for `_moved` (`_flat`); bound before `_take` runs, so watched as `_BASE` is."""
_HOOKED = [None, None, None, None]
"""The plugin manager, the implementations of `_HOOKS` (hook, plugin, function) when pytest was
configured and once collection ended, and those of then as `_hooks_now` lays them out."""
_TOLD = set()


def _altered(what):
    new = [w for w in what if w not in _TOLD]
    if new:
        _TOLD.update(new)
        _emit({"kind": "altered", "nodeid": _state("now"), "what": new[:20]})


def _impls(manager):
    found = []
    for hook in _HOOKS:
        caller = getattr(manager.hook, hook, None)
        for impl in (caller.get_hookimpls() if caller is not None else []):
            found.append((hook, impl.plugin, impl.function))
    return found


_PLUGIN_OF, _FUNCTION_OF = operator.attrgetter("plugin"), operator.attrgetter("function")
_REPEAT, _CHAIN = itertools.repeat, itertools.chain.from_iterable


def _hooks_now(manager):
    """The implementations of `_HOOKS`, as `_impls` reads them, in one tuple of objects to compare
    by identity (`_same`): how many each hook has, then each implementation, then their plugins,
    then their functions. The same as when collection ended, and `_impls` would find them the same."""
    lists = [caller.get_hookimpls() if caller is not None else ()
             for caller in map(getattr, _REPEAT(manager.hook), _HOOKS, _REPEAT(None))]
    impls = tuple(_CHAIN(lists))
    return (*map(len, lists), *impls, *map(_PLUGIN_OF, impls), *map(_FUNCTION_OF, impls))


def _same(now, then):
    """Two tuples of the same objects, compared by identity (no `__eq__` of the code under test answers)."""
    return len(now) == len(then) and not any(map(_IS_NOT, now, then))


def _honest_code(function):
    """A hook implementation's code is what it says: a real file the patch left alone (pytest's,
    an installed plugin's, the repo's own conftest or plugin module), with the function written at
    the line its code names. A plugin that claims pytest's module name, a module posing as a
    conftest, or code compiled under a borrowed file name is not."""
    for _ in range(8):
        code = getattr(function, "__code__", None)
        if code is not None:
            break
        function = getattr(function, "__func__", None) or getattr(function, "__wrapped__", None)
    if code is None:
        return True  # a builtin or C function: no Python code of the patch's
    return os.path.realpath(code.co_filename) not in _TOUCHED_PATHS and _written_at(code)


def _written_at(code):
    """The code's file is a real file that has the function (lambda, comprehension) at the line
    its code names: not code compiled under a borrowed file name."""
    path = os.path.realpath(code.co_filename)
    if not os.path.isfile(path):
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as source:
            lines = source.read().splitlines()[code.co_firstlineno - 1:code.co_firstlineno + 20]
    except OSError:
        return False
    name = code.co_name
    word = "lambda" if name == "<lambda>" else " for " if name.startswith("<") else f"def {name}"
    return any(word in line for line in lines)


def _flat(taken):
    """`taken` as `_moved` reads it, in tuples side by side: each binding in a dict or a class's
    mappingproxy (its namespace, its key, the object bound there), each attribute (its owner, its
    name, the object) and each count of a class's names (its namespace, the count)."""
    spaces, keys, values, owners, names, objects, counted, counts = ([] for _ in range(8))
    for _, space, key, value in taken:
        if key is None:
            counted.append(space)
            counts.append(value)
        elif isinstance(space, dict) or type(space).__name__ == "mappingproxy":
            spaces.append(space)
            keys.append(key)
            values.append(value)
        else:
            owners.append(space)
            names.append(key)
            objects.append(value)
    return [tuple(column) for column in (spaces, keys, values, owners, names, objects, counted, counts)]


_IS_NOT, _GETITEM = operator.is_not, operator.getitem


def _moved():
    """Whether anything in `_BASE` is bound otherwise now: what `_changed(_BASE)` finds, without
    naming it, at a fraction of the cost (it runs at every report and blind check). Every binding
    of every namespace is looked up and compared in one pass of `map` (`operator.getitem`, then
    `is not`, which no `__eq__` of the code under test answers for), the attributes in a second,
    with no list made; the counts are exact ints compared as a tuple. A name gone (the lookup
    raises) is a move."""
    spaces, keys, values, owners, names, objects, counted, counts = _FLAT
    try:
        return any(map(_IS_NOT, map(_GETITEM, spaces, keys), values)) \
            or any(map(_IS_NOT, map(getattr, owners, names), objects)) or tuple(map(len, counted)) != counts
    except Exception:
        return True


def _watch():
    """Compare the machinery with what it was at load (and pytest's hook implementations with what
    they were when pytest was configured and after collection); report what changed."""
    changed = _changed(_BASE) if _moved() else []
    manager, configured, hooked, laid = _HOOKED
    if manager is not None and not (laid is not None and _same(_hooks_now(manager), laid)):
        now = _impls(manager)
        if hooked is not None and now != hooked:
            changed.append("pytest's hook implementations changed during the tests")
        functions = {(hook, id(plugin)): function for hook, plugin, function in now}
        changed += [f"{hook} of {plugin!r} was replaced" for hook, plugin, function in configured or ()
                    if functions.get((hook, id(plugin)), function) is not function]
    if changed:
        _altered(changed)


def pytest_configure(config):
    _HOOKED[0], _HOOKED[1] = config.pluginmanager, _impls(config.pluginmanager)


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
    source = _found_at_its_name(cls)
    return bool(source) and source not in touched and _code_file(method) == source


def _found_at_its_name(cls):
    """The file of `cls`'s module when the class is found there by its qualified name, else ''."""
    module = sys.modules.get(getattr(cls, "__module__", None) or "")
    found = module
    for part in (getattr(cls, "__qualname__", "") or "").split("."):
        found = getattr(found, part, None)
    return (getattr(module, "__file__", None) or "") if found is cls else ""


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


def _unchanged(path, first, last):
    """No line from `first` to `last` of `path` is one the patch changed."""
    path = os.path.realpath(path)
    if path not in _TOUCHED_PATHS:
        return True
    spans = _CHANGED.get(os.path.relpath(path, os.path.realpath(_WORKDIR)))
    return spans is not None and not any(lo <= last and first <= hi for lo, hi in spans)


_SOURCES = {}


def _source(path):
    """A file as written: its syntax tree and the code objects it compiles to, by (name, first
    line); (None, {}) when it cannot be read. Only for the rare class `_as_it_was` looks at."""
    if path not in _SOURCES:
        import ast

        _SOURCES[path] = (None, {})
        try:
            with open(path, "rb") as fh:
                text = fh.read()
            tree, codes, stack = ast.parse(text, path), {}, [compile(text, path, "exec", dont_inherit=True)]
        except Exception:
            return _SOURCES[path]
        while stack:
            code = stack.pop()
            codes[(code.co_name, code.co_firstlineno)] = code
            stack.extend(c for c in code.co_consts if type(c) is type(code))
        _SOURCES[path] = (tree, codes)
    return _SOURCES[path]


_PLAIN_CONSTANTS = (type(None), type(Ellipsis), bool, int, float, complex, str, bytes)


def _same_constant(live, compiled):
    """Constants compared by exact type first, so no `__eq__` of the code under test answers."""
    if type(live) is not type(compiled):
        return False
    if type(live) is type(_same_constant.__code__):
        return _same_code(live, compiled)
    if type(live) in (tuple, frozenset):
        ordered = (lambda c: c) if type(live) is tuple else (lambda c: sorted(c, key=repr))
        return len(live) == len(compiled) and all(map(_same_constant, ordered(live), ordered(compiled)))
    return type(live) in _PLAIN_CONSTANTS and live == compiled


_CODE_FIELDS = ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_argcount",
                "co_kwonlyargcount", "co_flags", "co_name", "co_firstlineno")


def _same_code(live, compiled):
    return all(type(getattr(live, f)) is type(getattr(compiled, f)) and getattr(live, f) == getattr(compiled, f)
               for f in _CODE_FIELDS) and _same_constant(live.co_consts, compiled.co_consts)


def _as_written(code):
    """The code is what its file compiles to at its line, and no line of it is one the patch
    changed: not code compiled under a borrowed file name and line (`compile(src, file)`)."""
    compiled = _source(code.co_filename)[1].get((code.co_name, code.co_firstlineno))
    if compiled is None or not _same_code(code, compiled):
        return False
    import dis

    last = max((line for _, line in dis.findlinestarts(code) if line), default=code.co_firstlineno)
    return _unchanged(code.co_filename, code.co_firstlineno, last)


_IMPLICIT = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__firstlineno__",
             "__static_attributes__", "__annotations__", "__annotate__", "__annotate_func__", "__classcell__"}
"""Names the interpreter puts in a class's namespace that its body does not bind."""


def _class_node(cls, tree):
    """The one `class` statement of `tree` at `cls.__qualname__`'s place, or None (none, or two:
    a class the patch defined again under an old name is not the one found first)."""
    nodes = [tree]
    for part in cls.__qualname__.split("."):
        nodes = [n for node in nodes for n in getattr(node, "body", ()) if getattr(n, "name", None) == part]
    found = [n for n in nodes if type(n).__name__ == "ClassDef"]
    return found[0] if len(found) == 1 and len(nodes) == 1 else None


def _class_as_written(cls):
    """A class is its `class` statement as the file has it, untouched by the patch: none of its
    lines changed, no decorator, its namespace exactly the names its body binds (nothing put on it
    or taken off it from outside), each function in it the body's own code, and every other
    callable there a built-in type's own method under its own name (`__hash__ = object.__hash__`)."""
    import ast

    path = _found_at_its_name(cls)
    if not path:
        return False
    node = _class_node(cls, _source(path)[0]) if _source(path)[0] is not None else None
    if node is None or node.decorator_list or getattr(node, "end_lineno", None) is None \
            or not _unchanged(path, node.lineno, node.end_lineno):
        return False
    bound = set()
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(statement.name)
        elif isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets):
            bound.update(t.id for t in statement.targets)
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            bound.update([statement.target.id] if statement.value is not None else [])
        elif not isinstance(statement, (ast.Expr, ast.Pass)):
            return False  # a body that does more than bind names: not read here
    names = set(vars(cls)) - _IMPLICIT - ({"__hash__"} if vars(cls).get("__hash__", 0) is None else set())
    if names != bound:
        return False
    for key, value in vars(cls).items():
        wrapped = isinstance(value, (staticmethod, classmethod, property))
        for function in [getattr(value, n, None) for n in ("__func__", "fget", "fset", "fdel")] if wrapped else [value]:
            if type(function) is type(_class_as_written):  # the body's own: its code, within its lines
                if not (_as_written(function.__code__) and node.lineno <= function.__code__.co_firstlineno <= node.end_lineno):
                    return False
            elif function is not None and callable(function) and not isinstance(function, type) \
                    and not (isinstance(getattr(function, "__objclass__", None), type) and function.__name__ == key):
                return False
    return True


def _changed_globals(path):
    """Module-level names of `path` bound by a statement the patch changed, or None when a
    changed module-level statement does more than bind names (`Field.__eq__ = ...`, `setattr`)."""
    import ast

    tree, names = _source(path)[0], set()
    for statement in getattr(tree, "body", ()):
        if _unchanged(path, statement.lineno, getattr(statement, "end_lineno", statement.lineno)):
            continue
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in statement.names)
        elif isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets):
            names.update(t.id for t in statement.targets)
        elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)) and isinstance(statement.target, ast.Name):
            names.add(statement.target.id)
        else:
            return None
    return names


def _as_it_was(cls, selves, probes):
    """Whether `cls` is equal to anything as the repo had it, not by the patch's doing: an
    expression builder's `__eq__` (pypika's Term, peewee's and SQLAlchemy's columns) answers a
    query object, true, to anything, and a fix elsewhere in its file changes nothing of that.

    Each yes must hold for an instance made without `__init__` (its class's code says yes, not
    data the patch put in a live one), and run, under `sys.settrace` with its answer's truth told,
    only code its file compiles to at its line, no line of it changed, reading no module-level
    name a changed statement bound; the class and its answer's class (and their bases in touched
    files) must be their `class` statements as written (`_class_as_written`). Anything else,
    `tampered` as before. Python 3.8+ (end lines); older interpreters excuse nothing."""
    method = cls.__dict__["__eq__"]
    if type(method) is not type(_as_it_was) or not _says_yes(cls, [_blank(cls)], probes):
        return False
    ran = []

    def trace(frame, event, arg):
        if event == "call":
            ran.append(frame.f_code)
        return None

    answers = set()
    for self in selves:
        for probe in probes:
            del ran[:]
            before = sys.gettrace()
            sys.settrace(trace)
            try:
                answer = method.__get__(self, cls)(probe)
                yes = answer is not NotImplemented and bool(answer)
            except Exception:
                yes = False
            finally:
                sys.settrace(before)
            if yes:
                answers.add(type(answer))
                if not all(map(_as_written, set(ran))):
                    return False
                for code in set(ran):
                    changed = _changed_globals(code.co_filename) if os.path.realpath(code.co_filename) in _TOUCHED_PATHS else set()
                    if changed is None or changed & set(code.co_names):
                        return False
    if not (_in_touched_file(cls) and _class_as_written(cls)):
        return False  # the excuse is for a class of a touched file; any other suspect was made so
    others = {k for c in [cls, *answers] for k in c.__mro__ if k.__flags__ & _HEAP_TYPE}
    return all(_class_as_written(k) if _in_touched_file(k) else _functions_as_written(k) for k in others)


def _in_touched_file(cls):
    return os.path.realpath(getattr(sys.modules.get(cls.__module__), "__file__", "") or "") in _TOUCHED_PATHS


def _functions_as_written(cls):
    """A class of a file the patch left alone (a library's) holds, for each function, code its
    own module's file compiles to: nothing put on it from elsewhere (a C callable, a borrowed
    compile). What was taken off it is not seen here."""
    source = getattr(sys.modules.get(cls.__module__), "__file__", None)
    for value in vars(cls).values():
        for function in (value, *(getattr(value, n, None) for n in ("__func__", "fget", "fset", "fdel"))):
            if type(function) is type(_functions_as_written) and (
                    function.__code__.co_filename != source or not _as_written(function.__code__)):
                return False
    return True


_SUBCLASSES = type.__dict__["__subclasses__"]  # type's own: a metaclass's `__subclasses__` is not asked


def _classes():
    """Every class alive: the subclasses of `object`, of theirs, and so on, as the interpreter
    lists them. A tenth of the cost of looking at every object `gc.get_objects()` gives (~30k),
    and a class the code under test hid from that (`gc.freeze()`) is still found."""
    seen, found, stack = {id(object)}, [], [object]
    while stack:
        for cls in _SUBCLASSES(stack.pop()):
            if id(cls) not in seen:
                seen.add(id(cls))
                found.append(cls)
                stack.append(cls)
    return found


def _always_equal_classes():
    """Classes whose `__eq__` says yes to an object made up on the spot (a fresh string, number,
    bytes, container or plain object).

    Probed: every class made at run time whose `__eq__` is not its own, unchanged code (see
    `_defined_where_it_says`), with an instance made without `__init__`, with instances alive
    in the process, or with a stand-in `self` (for classes whose `__new__` needs arguments).
    (`__ne__` is not probed: an honest `__ne__` is also "unequal" to everything made up, and
    old code's `not self.__eq__(o)` says "not unequal" to everything.)"""
    touched = {os.path.join(_WORKDIR, p) for p in _TOUCHED}
    suspects = set()
    for obj in [*_classes(), *_MADE]:
        if isinstance(obj, type) and obj.__flags__ & _HEAP_TYPE and "__eq__" in obj.__dict__ \
                and not _defined_where_it_says(obj, obj.__dict__["__eq__"], touched):
            suspects.add(obj)
    alive = {}
    for obj in gc.get_objects() if suspects else ():
        kind = type(obj)
        if kind in suspects and len(alive.setdefault(kind, [])) < 3:
            alive[kind].append(obj)
    probes, found, as_it_was = _probes(), [], []
    for cls in suspects:
        selves = [*alive.get(cls, []), _blank(cls)]
        if _says_yes(cls, selves, probes):
            (as_it_was if _as_it_was(cls, selves, probes) else found).append(f"{cls.__module__}.{cls.__qualname__}.__eq__")
    return sorted(found), sorted(as_it_was)


def pytest_collection_finish(session):
    _watch()
    now = _impls(session.config.pluginmanager)
    added = [impl for impl in now if impl not in _HOOKED[1] and not _honest_code(impl[2])]
    if added:
        _altered([f"{hook} implemented by {plugin!r} during collection, in code the patch wrote or disguised"
                  for hook, plugin, _ in added])
    _HOOKED[2], _HOOKED[3] = now, _hooks_now(session.config.pluginmanager)
    _altered(_foreign_loaders(session.items))
    bindings = _state("bindings")
    for item in session.items:
        module = getattr(item, "module", None)
        if module is not None and id(vars(module)) not in bindings:
            bindings[id(vars(module))] = _bindings(vars(module))
    found, as_it_was = _always_equal_classes()
    _emit({"kind": "collected", "count": len(session.items), "always_equal": found, "as_it_was": as_it_was})


_OWN_LOADERS = ("_pytest.", "importlib.", "_frozen_importlib", "zipimport")


def _foreign_loaders(items):
    """Test modules that no loader of pytest's or the interpreter's loaded (a finder the code under
    test put on `sys.meta_path` could hand pytest a test module rewritten)."""
    found, seen = [], set()
    for item in items:
        module = getattr(item, "module", None)
        if module is None or id(module) in seen:
            continue
        seen.add(id(module))
        loader = getattr(getattr(module, "__spec__", None), "loader", None) or getattr(module, "__loader__", None)
        kind = type(loader)
        if loader is not None and not str(kind.__module__).startswith(_OWN_LOADERS):
            found.append(f"test module {module.__name__} loaded by {kind.__module__}.{kind.__qualname__}")
    return found


_METHODS = ("runtest", "setup", "teardown", "repr_failure", "reportinfo", "_prunetraceback", "_traceback_filter")


def _overridden(item):
    """A collected test whose own methods were shadowed on the instance (`item.runtest = ...`)."""
    shadowed = [name for name in _METHODS if name in vars(item)]
    if shadowed:
        _altered([f"{item.nodeid}: {', '.join(shadowed)} replaced on the test item"])


def pytest_sessionfinish(session, exitstatus):
    _watch()
    found, as_it_was = _always_equal_classes()
    _emit({"kind": "done", "exitstatus": int(exitstatus), "always_equal": found, "as_it_was": as_it_was})


_TOUCHED_PATHS = {os.path.realpath(os.path.join(_WORKDIR, p)) for p in _TOUCHED}
_USED_BUILTINS = _used_builtins()
_BASE.extend(_take())
_FLAT.extend(_flat(_BASE))


_OWN_CODES.update(_own_codes())
