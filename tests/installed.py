"""Programs that `make test` installs (Debian packages, by make targets) and tests start."""

from __future__ import annotations

from pathlib import Path

import pytest


def require(program: str | Path, target: str) -> None:
    """Skip, in one line naming the make target that installs it, when `program` is absent
    (a `pytest` run without `make test`); `make test` installs it, so there it always runs."""
    if not Path(program).exists():
        pytest.skip(f"{program} is missing: run `make {target}`")
