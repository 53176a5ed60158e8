"""The per-task table and the trajectory pages it links to.

Each kept row gets a page beside the report, `trajectories/<task>.<teacher>.<index>.html`: the
row as a trainer sees it, decoded from the dataset's `tokenized` ids run by run of equal mask
(`factory.render.show.mask_runs`, what `factory render` prints), trained text between ⟦ and ⟧
and highlighted. The ids are the dataset's, not a new render of the attempt file, so the page
shows what was published: secrets redacted, the run's template, nothing rendered twice.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable, Sequence
from html import escape
from pathlib import Path

from factory.report.drawing import rate
from factory.report.model import Link, Plot, RunData, Table, readable

FOLDER = "trajectories"

STYLE = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #1d2430; background: #fff; padding: 0 1em; }
pre { white-space: pre-wrap; word-break: break-word; font-size: 0.85em; line-height: 1.4; }
.masked { color: #6b7280; }
.trained { color: #14532d; background: #dcfce7; }
"""


def page_name(instance_id: str, teacher: str, index: int) -> str:
    """A file name of safe characters only, so it is its own href; the digest keeps two keys that
    differ only in unsafe characters apart."""
    safe = lambda name: re.sub(r"[^A-Za-z0-9_-]", "_", name)  # noqa: E731
    digest = hashlib.sha256(f"{instance_id}\0{teacher}\0{index}".encode()).hexdigest()[:8]
    return f"{safe(instance_id)}.{safe(teacher)}.{index}.{digest}.html"


def trajectory_page(title: str, ids: Sequence[int], mask: Sequence[int], decode: Callable[[Sequence[int]], str]) -> str:
    from factory.render.pieces import Rendered
    from factory.render.show import CLOSE, OPEN, mask_runs

    rendered = Rendered(input_ids=list(ids), assistant_masks=list(mask))
    body = "".join(f'<span class="trained">{escape(OPEN + text + CLOSE)}</span>' if trained
                   else f'<span class="masked">{escape(text)}</span>' for text, trained in mask_runs(rendered, decode))
    trained = sum(mask)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{escape(title)}</h1>\n"
        f"<p>{len(ids)} tokens, {trained} trained ({trained / len(ids) if ids else 0:.1%}). Trained text is between "
        f"{OPEN} and {CLOSE} (highlighted); the rest is masked out of the loss. Decoded from the dataset's "
        "token ids: what a trainer sees.</p>\n"
        f"<pre>{body}</pre>\n<p><a href=\"../index.html\">back to the report</a></p>\n</body>\n</html>\n"
    )


def write_trajectories(dataset: Path, template: str, out_dir: Path) -> dict[str, tuple[Link, ...]]:
    """A page per row of `dataset`'s `tokenized` config into `out_dir/trajectories/` (replaced
    whole, so it holds this dataset's rows only); the links by task. None without a built dataset."""
    import pyarrow.parquet as pq

    from factory.output.writer import TOKENIZED, data_files_pattern
    from factory.render import build_renderer

    folder = out_dir / FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    files = sorted(dataset.glob(data_files_pattern(TOKENIZED)))
    if not files:
        return {}
    decode = build_renderer(template=template).decode
    folder.mkdir(parents=True)
    links: dict[str, list[Link]] = {}
    columns = ["instance_id", "teacher", "attempt", "input_ids", "assistant_masks"]
    for file in files:
        for row in pq.read_table(file, columns=columns).to_pylist():
            name = page_name(row["instance_id"], row["teacher"], row["attempt"])
            title = f"{row['instance_id']} · {row['teacher']} · attempt {row['attempt']}"
            (folder / name).write_text(trajectory_page(title, row["input_ids"], row["assistant_masks"], decode),
                                       encoding="utf-8")
            links.setdefault(row["instance_id"], []).append(Link(f"{row['teacher']} #{row['attempt']}",
                                                                 f"{FOLDER}/{name}"))
    return {task: tuple(sorted(found, key=lambda link: link.text)) for task, found in links.items()}


def per_task(data: RunData, links: dict[str, tuple[Link, ...]]) -> Plot:
    """A section that is a table alone: one row per task, hardest first (as `pass_rate_by_task`)."""
    title = "Per task"
    caption = ("Each task's attempts, resolved of graded attempts, kept rows and pass rate = resolved / graded "
               "(pass_rate_by_task); each kept row links to its trajectory as a trainer sees it, trained text "
               "between ⟦ and ⟧ as factory render marks it.")
    if not data.tasks:
        return Plot("tasks", title, caption, note="No tasks recorded for this run yet.")
    if not links and any(t.kept for t in data.tasks):
        caption += " No trajectory pages: the run's dataset has no tokenized rows (build it with factory build)."
    table = Table(("task", "attempts", "resolved / graded", "kept rows", "pass rate", "kept trajectories"), tuple(
        (t.instance_id, readable(t.attempts), f"{t.passed}/{t.graded}", readable(t.kept), rate(t.pass_rate),
         links.get(t.instance_id, ())) for t in data.tasks))
    return Plot("tasks", title, caption, table=table)
