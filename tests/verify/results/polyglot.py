"""The real runner outputs in ../shared/fixtures/polyglot (SOURCES.md there states what each holds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory.records import TestStatus
from factory.verify.results import Results, read

POLYGLOT = Path(__file__).parents[3].parent / "shared" / "fixtures" / "polyglot"
needs_polyglot = pytest.mark.skipif(not POLYGLOT.is_dir(), reason="../shared/fixtures/polyglot is not beside the repo")


def read_fixture(reader: str, name: str, **kwargs) -> Results:
    return read(reader, (POLYGLOT / name).read_bytes(), **kwargs)


def ids(results: Results, status: TestStatus) -> set[str]:
    return {c.id for c in results.cases if c.status == status}


def codes(results: Results) -> list[str]:
    return [p.code.value for p in results.problems]
