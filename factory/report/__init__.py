"""The report: a run's warehouse as a page of plots, and the same plots for the dataset card.

    write_report(db, run_id, out_dir)   out_dir/index.html + one PNG per section, self-contained
    draw_plots(query, run_id, folder)   the PNGs alone (the dataset folder's plots/), and their
                                        titles and captions for the card

The sections: the funnel with drop reasons, pass rates over tasks with the learnable band,
attempts, kept rows and cost over time, turns and tokens of kept vs dropped attempts, exit
reasons, a per-teacher comparison, and pass rate and kept rows per language of the tasks. matplotlib loads only when something is drawn.
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


def write_report(db: Path, run_id: str, out_dir: Path) -> Path:
    """Read run `run_id` from the warehouse file `db`, draw its plots into `out_dir` and write
    `out_dir/index.html` (images by relative path, so the folder can be moved or sent as is)."""
    from factory.atomic import write_atomic
    from factory.report.page import render_page
    from factory.report.plots import draw

    out_dir = Path(out_dir)
    data = load_run(file_query(Path(db)), run_id)
    plots = draw(data, out_dir)
    page = out_dir / PAGE
    write_atomic(page, render_page(data, plots, source=str(db),
                                   made_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")))
    return page


__all__ = ["PAGE", "Plot", "Query", "RunData", "draw_plots", "file_query", "load_run", "write_report"]
