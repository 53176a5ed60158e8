"""The `factory` command line (typer). Each command is a thin edge over a stage's Python API.

Exit codes: 0 success, 1 the job ran and failed, 2 bad usage or bad input (one line that
names the file, line or field at fault).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from factory import __version__
from factory.config import Pipeline, load_pipeline
from factory.errors import FactoryError, UsageError

app = typer.Typer(
    name="factory",
    help="Rejection-sampling SFT data for coding agents: run teachers on tasks in Docker "
    "sandboxes, keep what hidden tests verify, write chat-template datasets.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"factory {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """factory: SFT data for coding agents by rejection sampling."""


@app.command()
def run(
    pipeline: Annotated[Path, typer.Argument(help="Pipeline YAML, e.g. pipelines/demo.yaml.")],
    run_id: Annotated[str | None, typer.Option(help="Run id; rerunning an id resumes it.")] = None,
    limit: Annotated[int | None, typer.Option(help="Use at most this many tasks.")] = None,
    max_cost: Annotated[float | None, typer.Option(help="Stop launching at this many USD.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Validate the pipeline and print the plan.")] = False,
) -> None:
    """Run (or resume) a pipeline: sample, verify, filter, render, write the dataset."""
    config = load_pipeline(pipeline)
    if limit is not None:
        config.tasks.limit = limit
    if max_cost is not None:
        config.budget.max_cost_usd = max_cost
    print_plan(config, run_id)
    if not dry_run:
        raise UsageError("factory run without --dry-run needs the scheduler (issue 7), not landed yet")


@app.command()
def clean(
    all_: Annotated[bool, typer.Option("--all", help="Remove every factory container, also of live runs.")] = False,
    run_id: Annotated[str | None, typer.Option(help="Remove the containers of this run only.")] = None,
) -> None:
    """Remove leftover sandbox containers (found by their factory labels)."""
    from factory.sandbox import remove_containers

    removed = remove_containers(run_id=run_id, everything=all_)
    scope = "all factory containers" if all_ else (f"run {run_id}" if run_id else "containers of dead factory processes")
    console.print(f"removed {removed} container(s): {scope}")


def print_plan(config: Pipeline, run_id: str | None) -> None:
    """The plan of a run; never prints values that came from the environment (secrets)."""
    t, s = config.tasks, config.sampling
    console.print(f"[bold]pipeline[/] {config.name}  ({config.path})")
    console.print(f"  run id        {run_id or '(new)'}")
    selection = [f"limit={t.limit}" if t.limit else "", f"shuffle_seed={t.shuffle_seed}" if t.shuffle_seed is not None else ""]
    console.print(f"  tasks         {escape(t.source)} {escape(f'[{t.format}]')} {' '.join(x for x in selection if x)}")
    for teacher in config.teachers:
        console.print(f"  teacher       {teacher.label}: {teacher.kind} {teacher.model}")
    console.print(
        f"  attempts      up to {s.attempts_per_task} per task and teacher, "
        f"stop after {s.stop_after_kept} kept, {s.max_in_flight} in flight"
    )
    a, sb = config.agent, config.sandbox
    console.print(f"  agent limits  {a.max_turns} turns, {a.max_tokens} tokens, {a.max_wall_seconds:.0f} s per attempt")
    console.print(f"  sandboxes     network={sb.network} memory={sb.memory} cpus={sb.cpus} max_live={sb.max_live}")
    budget = f"${config.budget.max_cost_usd:.2f}" if config.budget.max_cost_usd else "none"
    console.print(f"  budget        {budget}")
    console.print(f"  output        {config.resolve(config.output.dir)}")


def entrypoint() -> None:
    """Console-script entry: a user's error is one line on stderr and exit code 2."""
    try:
        app()
    except UsageError as exc:
        err_console.print(f"factory: {exc}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)
    except FactoryError as exc:
        err_console.print(f"factory: {exc}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    entrypoint()
