"""Reading the fields of a task row: every format's loader reads its row through these, so a
row that does not fit fails the same way in every format, naming the instance and the field.

    BadRow          the row is malformed: skipped and reported (fatal with `strict`)
    Unsupported     the row is well formed, but factory has no reader for how its tests report
                    (a language or log parser without one): skipped and counted, never a crash
"""

from __future__ import annotations

import json
from typing import Any

from factory.errors import UsageError


class BadRow(UsageError):
    def __init__(self, instance_id: str, field: str, message: str):
        self.instance_id, self.field = instance_id, field
        super().__init__(f"task {instance_id}: {field}: {message}")


class Unsupported(BadRow):
    """A well-formed row whose tests factory cannot read yet (`language` says which language)."""

    def __init__(self, instance_id: str, field: str, message: str, *, language: str):
        self.language = language
        super().__init__(instance_id, field, f"unsupported: {message}")


def instance_id(row: dict[str, Any], key: str = "instance_id") -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value:
        raise BadRow(str(row.get(key, f"<no {key}>")), key, "field required")
    return value


def text(row: dict[str, Any], key: str, iid: str, *, required: bool = True) -> str:
    value = row.get(key)
    if value is None or value == "":
        if required:
            raise BadRow(iid, key, "field required")
        return ""
    if not isinstance(value, str):
        raise BadRow(iid, key, f"must be a string, got {type(value).__name__}")
    return value


def test_ids(row: dict[str, Any], key: str, iid: str) -> list[str]:
    """A list of test names, given as a list or as a JSON string of one (Hub datasets do both)."""
    value = row.get(key, [])
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError as exc:
            raise BadRow(iid, key, f"not a JSON list of test ids ({exc.msg})") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRow(iid, key, "must be a list of test ids (strings)")
    return value


def mapping(row: dict[str, Any], key: str, iid: str, *, required: bool = True) -> dict[str, Any]:
    """An object field, given as a dict or as a JSON string of one (Arrow stores varying structs as text)."""
    value = row.get(key)
    if value is None or value == "":
        if required:
            raise BadRow(iid, key, "field required")
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise BadRow(iid, key, f"not a JSON object ({exc.msg})") from None
    if not isinstance(value, dict):
        raise BadRow(iid, key, f"must be an object, got {type(value).__name__}")
    return value


def need_fail_to_pass(f2p: list[str], iid: str, key: str = "FAIL_TO_PASS") -> list[str]:
    if not f2p:
        raise BadRow(iid, key, "empty: a task needs at least one test that the fix makes pass")
    return f2p
