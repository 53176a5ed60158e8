from __future__ import annotations

from pathlib import Path

import pytest

from factory.run.folder import RunStore
from factory.warehouse import Warehouse
from tests.report.sample import finished_run
from tests.warehouse import sample


@pytest.fixture(scope="module")
def built_run(tmp_path_factory) -> RunStore:
    """A real run folder (attempt files, warehouse, dataset with its plots), made without Docker."""
    return finished_run(tmp_path_factory.mktemp("report-run"))


TOKENS = {("easy", "A", 0): (1200, 300), ("mid", "A", 0): (2500, 500), ("mid", "B", 0): (9000, 900),
          ("mid2", "B", 0): (40_000, 4000)}
"""Exact counts for r1's four kept rows, as a build records them; the longest is over the default
max_length (32768), as after `factory build --max-tokens 50000`, which the run's pipeline does not record."""


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = sample.build(tmp_path_factory.mktemp("wh") / "warehouse.duckdb")
    with Warehouse(path) as wh:
        wh.record_token_counts("r1", [{"instance_id": i, "teacher": t, "attempt": n, "num_tokens": total,
                                       "assistant_tokens": trained, "tokens_exact": True}
                                      for (i, t, n), (total, trained) in TOKENS.items()])
    return path
