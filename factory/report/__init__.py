"""The report: a run's warehouse as a page of plots, and the same plots for the dataset card.

    write_report(db, run_id, out_dir, dataset)
                                        out_dir/index.html + one PNG per section, self-contained,
                                        and a page per kept row of the dataset in trajectories/
    draw_plots(query, run_id, folder)   the PNGs alone (the dataset folder's plots/), and their
                                        titles and captions for the card

The sections: the funnel with drop reasons, pass rates over tasks with the learnable band,
attempts, kept rows and cost over time, turns and tokens of kept vs dropped attempts, exit
reasons, a per-teacher comparison, pass rate and kept rows per language of the tasks, kept rows'
length against the run's max_length, the trained share per row, reward spread within groups
over time and the share of mixed groups; then, on the page only, a per-task table linking to
each kept row's trajectory. matplotlib loads only when something is drawn.
See docs/report.md.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from factory.report.data import Query, file_query, load_run
from factory.report.model import Plot, RunData

PAGE = "index.html"


def draw_plots(query: Query, run_id: str, folder: Path) -> list[Plot]:
    from factory.report.plots import draw

    return draw(load_run(query, run_id), Path(folder))


def write_report(db: Path, run_id: str, out_dir: Path, dataset: Path | None = None) -> Path:
    """Read run `run_id` from the warehouse file `db`, draw its plots into `out_dir` and write
    `out_dir/index.html` (images and pages by relative path, so the folder can be moved or sent as
    is); with the run's built `dataset` folder, a page per kept row, linked from the per-task table."""
    from factory.atomic import write_atomic
    from factory.report.data import run_settings
    from factory.report.page import render_page
    from factory.report.plots import draw
    from factory.report.trajectories import per_task, write_trajectories

    out_dir = Path(out_dir)
    query = file_query(Path(db))
    data = load_run(query, run_id)
    plots = draw(data, out_dir)
    links = write_trajectories(Path(dataset), run_settings(query, run_id).template, out_dir) if dataset else {}
    plots.append(per_task(data, links))
    page = out_dir / PAGE
    write_atomic(page, render_page(data, plots, source=str(db),
                                   made_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")))
    return page


__all__ = ["PAGE", "Plot", "Query", "RunData", "draw_plots", "file_query", "load_run", "write_report"]
