"""A typer app's command run in this process, as the tests drive the CLI without a subprocess."""

from __future__ import annotations

import typer
from typer.testing import CliRunner


def invoke(app: typer.Typer, *args: str) -> str:
    """The command's output; its own exception re-raised, and any other exit a failed assertion."""
    result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.output
    return result.stdout
