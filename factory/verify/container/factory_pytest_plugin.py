"""Reporting plugin loaded into the verification pytest process (stdlib + pytest only).

Reads its signing key from a pipe before any code under test is imported, then reports
every test phase, collection errors, and an equality probe through a private pipe.
"""

import gc
import hashlib
import hmac
import json
import os

_FD = int(os.environ.pop("FACTORY_REPORT_FD"))
_KEY_FD = int(os.environ.pop("FACTORY_KEY_FD"))
_KEY = os.read(_KEY_FD, 64)
os.close(_KEY_FD)
with open(os.environ.pop("FACTORY_JOB")) as _fh:
    _JOB = json.load(_fh)


def _emit(record):
    payload = json.dumps(record, sort_keys=True).encode()
    mac = hmac.new(_KEY, payload, hashlib.sha256).hexdigest().encode()
    os.write(_FD, mac + b" " + payload + b"\n")


def command_line():
    return [
        "-c", _JOB["ini"], "--rootdir", _JOB["workdir"], "-p", "no:cacheprovider",
        "-o", "addopts=", "-q", "--tb=short", "-W", "ignore::DeprecationWarning", *_JOB["ids"],
    ]


def pytest_runtest_logreport(report):
    record = {"kind": "test", "nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
              "xfail": hasattr(report, "wasxfail")}
    if report.nodeid == _JOB["control"]:
        record["longrepr"] = str(report.longrepr)[-4000:]
    _emit(record)


def pytest_collectreport(report):
    if report.failed:
        _emit({"kind": "collect_error", "nodeid": report.nodeid, "detail": str(report.longrepr)[-2000:]})


class _Probe:
    pass


def _always_equal_classes():
    """Classes defined in files the agent changed whose __eq__ says yes to a brand-new object."""
    touched = {os.path.join(_JOB["workdir"], p) for p in _JOB["touched"]}
    found = []
    for obj in gc.get_objects():
        if not isinstance(obj, type):
            continue
        module = __import__("sys").modules.get(getattr(obj, "__module__", ""), None)
        if getattr(module, "__file__", None) not in touched:
            continue
        for name, bad in (("__eq__", True), ("__ne__", False)):
            if name not in obj.__dict__:
                continue
            try:
                try:
                    instance = object.__new__(obj)
                except TypeError:
                    instance = obj.__new__(obj)
                answer = getattr(instance, name)(_Probe())
            except Exception:
                continue
            if answer is not NotImplemented and bool(answer) is bad:
                found.append(f"{obj.__module__}.{obj.__qualname__}.{name}")
    return sorted(set(found))


def pytest_collection_finish(session):
    _emit({"kind": "collected", "count": len(session.items), "always_equal": _always_equal_classes()})


def pytest_sessionfinish(session, exitstatus):
    _emit({"kind": "done", "exitstatus": int(exitstatus), "always_equal": _always_equal_classes()})
