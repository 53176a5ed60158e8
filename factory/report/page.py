"""The report page: one self-contained HTML file whose images are the PNGs next to it."""

from __future__ import annotations

from html import escape

from factory.report.model import Cell, Plot, RunData, Table

STYLE = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1000px;
       color: #1d2430; background: #fff; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
.meta { color: #5b6270; margin-top: 0; }
.scripted { background: #fff4d6; border: 1px solid #e0b84c; padding: 0.6em 1em; border-radius: 4px; }
section { border-top: 1px solid #dde1e7; padding-top: 0.8em; margin-top: 1.4em; }
h2 { font-size: 1.2em; margin: 0 0 0.3em; }
.caption { color: #3d4450; margin: 0 0 0.6em; font-size: 0.92em; }
.empty { color: #8a5a00; font-style: italic; }
img { max-width: 100%; height: auto; }
table { border-collapse: collapse; margin-top: 0.6em; font-size: 0.88em; }
th, td { border: 1px solid #dde1e7; padding: 0.2em 0.6em; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
"""


def _cell(cell: Cell) -> str:
    if not isinstance(cell, str):
        return "<td>" + ", ".join(f'<a href="{escape(link.href)}">{escape(link.text)}</a>' for link in cell) + "</td>"
    number = cell[:1].isdigit() or cell[:2] in ("-0", "$0") or cell[:1] == "$"
    return f'<td class="n">{escape(cell)}</td>' if number else f"<td>{escape(cell)}</td>"


def _table(table: Table | None) -> str:
    if table is None:
        return ""
    head = "".join(f"<th>{escape(h)}</th>" for h in table.header)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>\n" for row in table.rows)
    return f"\n<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>"


def _section(plot: Plot) -> str:
    body = (f'<img src="{escape(plot.image)}" alt="{escape(plot.title)}">' if plot.image
            else f'<p class="empty">{escape(plot.note)}</p>' if plot.note else "")
    return (f'<section id="{escape(plot.name)}">\n<h2>{escape(plot.title)}</h2>\n'
            f'<p class="caption">{escape(plot.caption)}</p>\n{body}{_table(plot.table)}\n</section>')


def render_page(data: RunData, plots: list[Plot], *, source: str, made_at: str) -> str:
    attempts = len(data.attempts)
    kept = sum(bool(a.kept) for a in data.attempts)
    summary = (f"{attempts} attempt(s), {kept} kept, {len(data.tasks)} task(s); from {source}, {made_at}"
               if attempts else f"No attempts recorded for this run yet ({len(data.tasks)} task(s)); from {source}, "
               f"{made_at}")
    banner = ('<p class="scripted">Made by the offline <b>scripted</b> teacher: these numbers demonstrate the '
              "pipeline, not a model's behaviour.</p>\n" if data.scripted else "")
    sections = "\n".join(_section(p) for p in plots)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>factory report: {escape(data.run_id)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<h1>factory report: run {escape(data.run_id)}</h1>\n<p class=\"meta\">{escape(summary)}</p>\n"
        f"{banner}{sections}\n</body>\n</html>\n"
    )
