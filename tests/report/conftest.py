from __future__ import annotations

import pytest

from factory.run.folder import RunStore
from tests.report.sample import finished_run


@pytest.fixture(scope="module")
def built_run(tmp_path_factory) -> RunStore:
    """A real run folder (attempt files, warehouse, dataset with its plots), made without Docker."""
    return finished_run(tmp_path_factory.mktemp("report-run"))
