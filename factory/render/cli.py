"""`factory render RUN [ATTEMPT] [--template qwen3]`: one trajectory, rendered for eyes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from factory.errors import UsageError
from factory.render.config import TEMPLATE_NAMES, Thinking

if TYPE_CHECKING:
    from factory.records import Trajectory


def _parse(path: Path) -> Trajectory:
    from pydantic import ValidationError

    from factory.records import Attempt, Trajectory

    raw = path.read_text(encoding="utf-8")
    try:
        return Trajectory.model_validate_json(raw)
    except ValidationError as as_trajectory:
        try:
            attempt = Attempt.model_validate_json(raw)
        except ValidationError:
            first = as_trajectory.errors()[0]
            where = ".".join(map(str, first["loc"]))
            raise UsageError(f"{path}: not a trajectory: {where}: {first['msg']}") from as_trajectory
    if attempt.trajectory is None:
        raise UsageError(f"{path}: the attempt has no trajectory ({attempt.error_class or 'no error class'})")
    return attempt.trajectory


def load_trajectory(run: str, attempt: str | None) -> Trajectory:
    """RUN as a trajectory (or attempt) JSON file; or a run folder (or run id) and ATTEMPT, as
    `INSTANCE[/TEACHER]/INDEX` or the attempt file's path in the folder (`attempts/.../0.json`)."""
    path = Path(run)
    if path.is_file():
        return _parse(path)
    if attempt is None:
        if path.is_dir():
            raise UsageError(f"{run}: a folder; name the attempt to render (INSTANCE[/TEACHER]/INDEX, or its "
                             f"file's path in the folder): `factory show {run}` lists them")
        raise UsageError(f"{run}: not a trajectory file or a run folder; pass a trajectory or attempt JSON file, "
                         "or RUN ATTEMPT")
    if path.is_dir():
        hits = [p for p in (path / attempt, path / f"{attempt}.json") if p.is_file()]
        hits = hits or ([] if (path / "run.json").exists() else sorted(path.rglob(f"{attempt}.json")))
        if len(hits) == 1:
            return _parse(hits[0])
        if hits:
            raise UsageError(f"{run}: {len(hits)} files match attempt {attempt!r}: {hits[0]}, {hits[1]}, ...")
    from factory.run.folder import RunStore

    found = RunStore.find(run).find_attempt(attempt)
    if found.trajectory is None:
        raise UsageError(f"attempt {attempt} of run {run} has no trajectory ({found.error_class})")
    return found.trajectory


def render(
    run: Annotated[str, typer.Argument(help="A trajectory or attempt JSON file, or a run (folder or id).")],
    attempt: Annotated[str | None, typer.Argument(
        help="With a run: INSTANCE[/TEACHER]/INDEX, or the attempt file's path in the run folder.")] = None,
    template: Annotated[str, typer.Option(help=f"One of: {', '.join(TEMPLATE_NAMES)}.")] = "qwen3",
    thinking: Annotated[Thinking, typer.Option(help="Which turns keep their reasoning.")] = Thinking.last_query,
    tokenizer: Annotated[str | None, typer.Option(help="HF tokenizer name or path (template hf).")] = None,
    color: Annotated[bool | None, typer.Option("--color/--no-color", help="Default: on a terminal.")] = None,
) -> None:
    """Print a rendered trajectory; trained text is between ⟦ and ⟧, the rest is masked."""
    from factory.render.pieces import RenderError
    from factory.render.renderer import build_renderer
    from factory.render.show import show

    err = Console(stderr=True, soft_wrap=True)  # one line, however long
    try:
        traj = load_trajectory(run, attempt)
        renderer = build_renderer(template=template, thinking=thinking, tokenizer=tokenizer)
        rendered = renderer.render(traj.messages, traj.tools)
    except RenderError as exc:
        err.print(f"factory: {run}: cannot render exactly ({exc.reason}): {exc}", markup=False)
        raise typer.Exit(1) from exc
    except UsageError as exc:
        err.print(f"factory: {exc}", markup=False)
        raise typer.Exit(2) from exc
    label = " [scripted teacher]" if traj.scripted else ""
    card = ", ".join(f"{k}={v}" for k, v in renderer.card().items() if not k.endswith("sha256"))
    header = f"{traj.instance_id} · {traj.teacher} · {traj.model}{label} · {card}"
    console = Console(force_terminal=color, no_color=color is False, highlight=False)
    show(rendered, renderer.decode, console, header)
