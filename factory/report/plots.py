"""The report's run-level plots, one PNG per section (drawn with `drawing`).

matplotlib loads on the first `draw`, never with the command line. Each section says what it
shows and what each rate is out of; a section with nothing to show has a note instead of a PNG.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from factory.report.drawing import (
    BAND,
    BLUE,
    DROPPED,
    GREY,
    KEPT,
    pct,
    pyplot,
    rate,
    readable_axis,
    save,
    usd,
)
from factory.report.model import Plot, RunData, Table, readable
from factory.report.training import mixed_groups, reward_spread, row_lengths, trained_share


def funnel(data: RunData, folder: Path) -> Plot:
    total = data.funnel[0].remaining if data.funnel else 0
    title = "Funnel and drop reasons"
    caption = (f"Attempts left after each stage; every % is of all {total} attempts. Each filter stage drops "
               "what that filter dropped, once (the first, resolved, what the verifier did not resolve); filter "
               "stages count the attempts with a recorded filter decision. The table names the drops by reason.")
    if not total:
        return Plot("funnel", title, caption, note="No attempts recorded for this run yet.")
    reasons: dict[str, list[str]] = {}
    for d in data.drops:
        reasons.setdefault(d.filter, []).append(f"{d.reason} {readable(d.attempts)}")
    table = Table(("stage", "attempts left", "% of attempts", "dropped", "drop reasons"), tuple(
        (s.stage, readable(s.remaining), pct(s.remaining, total), "" if s.dropped is None else readable(s.dropped),
         ", ".join(reasons.get(s.stage, []))) for s in data.funnel))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(data.funnel) + 1.2))
    stages = list(reversed(data.funnel))
    colours = [KEPT if s.stage == "kept" else BLUE for s in stages]
    ax.barh([s.stage for s in stages], [s.remaining for s in stages], color=colours)
    for y, s in enumerate(stages):
        label = f" {readable(s.remaining)} ({pct(s.remaining, total)})" + (f"  -{readable(s.dropped)}" if s.dropped else "")
        ax.text(s.remaining, y, label, va="center", fontsize=8)
    ax.set_xlim(0, total * 1.15)  # the axis ends near the largest bar; the room left is for its label
    ax.set_xlabel("attempts")
    readable_axis(ax.xaxis)
    return Plot("funnel", title, caption, save(fig, folder, "funnel"), table=table)


def pass_rates(data: RunData, folder: Path) -> Plot:
    graded = [t for t in data.tasks if t.pass_rate is not None]
    bands = Counter(t.band for t in data.tasks)
    title = "Pass rate over tasks"
    caption = (f"Tasks by pass rate p = resolved / graded attempts of the task (infrastructure errors are not graded): "
               f"{bands['learnable']} of {len(graded)} graded tasks are learnable (0 < p < 1, shaded), "
               f"{bands['too_hard']} too hard (p = 0), {bands['too_easy']} too easy (p = 1)"
               + (f"; {len(data.tasks) - len(graded)} not graded yet." if len(graded) < len(data.tasks) else "."))
    if not graded:
        return Plot("pass_rates", title, caption, note="No graded attempts yet: no task has a pass rate.")
    learnable = [t.pass_rate for t in graded if 0 < t.pass_rate < 1]
    table = Table(("pass rate p", "tasks"), (
        ("0 (too hard)", str(bands["too_hard"])),
        *((f"{i / 10:.1f}-{(i + 1) / 10:.1f} (learnable)", str(sum(i / 10 <= p < (i + 1) / 10 or (i == 9 and p < 1)
                                                                     for p in learnable)))
          for i in range(10)),
        ("1 (too easy)", str(bands["too_easy"]))))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 3.6))
    ax.axvspan(0.0, 1.0, color=BAND, zorder=0, label="learnable band 0 < p < 1")
    edges = [i / 10 for i in range(11)]
    highest = max([bands["too_hard"], bands["too_easy"], 1])
    if learnable:
        counts, _, bars = ax.hist(learnable, bins=edges, color=BLUE, edgecolor="white", zorder=2, label="learnable tasks")
        ax.bar_label(bars, labels=[f"{c:.0f}" if c else "" for c in counts], fontsize=8)
        highest = max(highest, *counts)
    for p, colour, band in ((0.0, DROPPED, "too_hard"), (1.0, GREY, "too_easy")):
        if bands[band]:
            bar = ax.bar([p], [bands[band]], width=0.06, color=colour, zorder=3, label=f"{band.replace('_', ' ')} (p = {p:g})")
            ax.bar_label(bar, fontsize=8)
    ax.set_ylim(0, highest * 1.15)  # to the tallest bar, with room for its label
    ax.set_xlim(-0.08, 1.08)
    ax.set_xlabel("pass rate p (resolved / graded attempts)")
    ax.set_ylabel("tasks")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=3, frameon=False)  # under the axes
    return Plot("pass_rates", title, caption, save(fig, folder, "pass_rates"), table=table)


def over_time(data: RunData, folder: Path) -> Plot:
    timed = [a for a in data.attempts if a.finished_at is not None]
    priced = [a for a in timed if a.cost_usd is not None]
    cost = sum(a.cost_usd for a in priced)
    unpriced = len(timed) - len(priced)
    title = "Attempts, kept rows and cost over time"
    caption = (f"Running totals by minutes since the run's first attempt started: attempts finished ({len(timed)}), "
               f"rows kept ({sum(bool(a.kept) for a in timed)} of {len(data.decided)} attempts with a filter "
               f"decision), and cost in USD of the {len(priced)} priced attempts (${cost:.2f})"
               + (f"; {unpriced} unpriced attempt(s) not in it." if unpriced else "."))
    if not timed:
        return Plot("over_time", title, caption, note="No finished attempts recorded for this run yet.")
    start = min(a.started_at or a.finished_at for a in timed)
    minutes = [(a.finished_at - start).total_seconds() / 60 for a in timed]
    plt = pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    xs = [0.0, *minutes]  # every line starts at zero when the run starts
    running = lambda values: [0, *(sum(values[: i + 1]) for i in range(len(values)))]  # noqa: E731
    top.step(xs, running([1] * len(timed)), where="post", label="attempts finished", color=BLUE)
    top.step(xs, running([int(bool(a.kept)) for a in timed]), where="post", label="rows kept", color=KEPT)
    top.set_xlim(0, max(minutes) * 1.02 or 1.0)
    top.set_ylabel("count")
    readable_axis(top.yaxis)
    top.legend(fontsize=8, loc="upper left")
    if cost > 0:
        bottom.step(xs, running([a.cost_usd or 0.0 for a in timed]), where="post", color=DROPPED)
        bottom.set_ylabel("cost (USD)")
    else:
        why = (("every priced attempt cost $0" + (" (the scripted teacher is free)" if data.scripted else ""))
               if priced else "no attempt has a known price")
        bottom.text(0.5, 0.5, f"no cost recorded: {why}", ha="center", va="center", transform=bottom.transAxes)
        bottom.set_yticks([])
        caption += f" No cost recorded: {why}."
    bottom.set_xlabel("minutes since the first attempt started")
    marks = sorted({round(len(timed) * k / 10) for k in range(1, 11)} - {0})  # ten points along the run
    table = Table(("minutes", "attempts finished", "rows kept", "cost (USD)"), tuple(
        (f"{minutes[i - 1]:.1f}", readable(i), readable(sum(bool(a.kept) for a in timed[:i])),
         usd(sum(a.cost_usd or 0.0 for a in timed[:i]))) for i in marks))
    return Plot("over_time", title, caption, save(fig, folder, "over_time"), table=table)


def kept_vs_dropped(data: RunData, folder: Path) -> Plot:
    kept = [a for a in data.decided if a.kept]
    dropped = [a for a in data.decided if not a.kept]
    title = "Turns and tokens: kept vs dropped"
    caption = (f"Per attempt, of the {len(data.decided)} attempts with a filter decision: {len(kept)} kept, "
               f"{len(dropped)} dropped (by any filter, failures included). Tokens are input + output over all turns.")
    if not data.decided:
        return Plot("kept_vs_dropped", title, caption, note="No filter decisions recorded for this run yet.")
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    groups = [(f"kept ({len(kept)})", kept, KEPT), (f"dropped ({len(dropped)})", dropped, DROPPED)]
    shown = [g for g in groups if g[1]]
    for ax, (what, value) in zip(axes, (("turns", lambda a: a.n_turns), ("tokens", lambda a: a.total_tokens)),
                                 strict=True):
        box = ax.boxplot([[value(a) for a in g[1]] for g in shown], patch_artist=True, widths=0.5)
        ax.set_xticks(range(1, len(shown) + 1), [g[0] for g in shown])
        for patch, g in zip(box["boxes"], shown, strict=True):
            patch.set_facecolor(g[2])
            patch.set_alpha(0.6)
        ax.set_title(f"{what} per attempt", fontsize=10)
        readable_axis(ax.yaxis)
    rows = []
    for name, attempts, _ in shown:
        for what, value in (("turns", lambda a: a.n_turns), ("tokens", lambda a: a.total_tokens)):
            values = sorted(value(a) for a in attempts)
            rows.append((name, what, readable(values[0]), readable(values[len(values) // 2]), readable(values[-1])))
    table = Table(("attempts", "per attempt", "least", "median", "most"), tuple(rows))
    return Plot("kept_vs_dropped", title, caption, save(fig, folder, "kept_vs_dropped"), table=table)


def exit_reasons(data: RunData, folder: Path) -> Plot:
    counts = Counter((a.exit, a.outcome) for a in data.attempts)
    total = len(data.attempts)
    title = "Exit reasons"
    caption = (f"How the {total} attempts ended: the agent loop's exit, then the outcome after it (resolved, "
               "unresolved:<verdict reason>, unverified:<exit>, error:<infrastructure>); every % is of all attempts.")
    if not total:
        return Plot("exit_reasons", title, caption, note="No attempts recorded for this run yet.")
    rows = sorted(counts.items(), key=lambda kv: kv[1])
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 0.4 * len(rows) + 1.2))
    colour = lambda outcome: KEPT if outcome == "resolved" else GREY if outcome.startswith("error:") else DROPPED  # noqa: E731
    ax.barh([f"{e} -> {o}" for (e, o), _ in rows], [n for _, n in rows], color=[colour(o) for (_, o), _ in rows])
    for y, (_, n) in enumerate(rows):
        ax.text(n, y, f" {n} ({pct(n, total)})", va="center", fontsize=8)
    ax.set_xlim(0, max(counts.values()) * 1.25)
    ax.set_xlabel("attempts")
    readable_axis(ax.xaxis)
    table = Table(("exit", "outcome", "attempts", "% of attempts"),
                  tuple((e, o, readable(n), pct(n, total)) for (e, o), n in reversed(rows)))
    return Plot("exit_reasons", title, caption, save(fig, folder, "exit_reasons"), table=table)


def teachers(data: RunData, folder: Path) -> Plot:
    by = data.group_by
    title = f"Per {by}"
    caption = (f"Per {by}: pass rate = resolved / graded attempts; kept share = kept rows / all attempts; "
               "cost per kept row = USD of its attempts / kept rows (none while any attempt is unpriced)."
               + ("" if "harness" in by else " The warehouse records no harness, so teachers alone are compared."))
    if not data.groups:
        return Plot("teachers", title, caption, note="No attempts recorded for this run yet.")
    plt = pyplot()
    fig, (rates, costs) = plt.subplots(1, 2, figsize=(9, 0.5 * len(data.groups) + 2.2))
    labels = [g.label + (" (scripted)" if g.scripted else "") for g in data.groups]
    ys = list(range(len(data.groups)))
    passing = rates.barh([y + 0.2 for y in ys], [g.pass_rate or 0 for g in data.groups], height=0.4, color=BLUE,
                         label="pass rate (resolved / graded)")
    rates.bar_label(passing, labels=[f" {rate(g.pass_rate)} ({g.passed}/{g.graded})" for g in data.groups], fontsize=7)
    kept = rates.barh([y - 0.2 for y in ys], [g.kept_share for g in data.groups], height=0.4, color=KEPT,
                      label="kept share (kept / attempts)")
    rates.bar_label(kept, labels=[f" {rate(g.kept_share)} ({g.kept}/{g.attempts})" for g in data.groups], fontsize=7)
    rates.set_yticks(ys, labels)
    rates.set_xlim(0, 1.45)  # a rate is at most 1; the rest is room for the labels
    rates.set_xticks([0, 0.25, 0.5, 0.75, 1])
    rates.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=1, frameon=False)  # under the bars
    per_kept = [g.cost_per_kept for g in data.groups]
    costs.barh(ys, [c or 0 for c in per_kept], color=DROPPED)
    for y, g, c in zip(ys, data.groups, per_kept, strict=True):
        text = (f" ${c:.4f}" if c is not None else " unpriced" if g.unpriced else " no kept row")
        costs.text(c or 0, y, text + f"  ({g.kept}/{g.attempts} kept)", va="center", fontsize=8)
    costs.set_yticks(ys, [""] * len(ys))
    costs.set_xlim(0, max([c for c in per_kept if c] or [1]) * 1.8)
    costs.set_xlabel("cost per kept row (USD)")
    table = Table((by, "attempts", "graded", "resolved", "pass rate", "kept", "kept share", "cost per kept row"), tuple(
        (label, readable(g.attempts), readable(g.graded), readable(g.passed), rate(g.pass_rate), readable(g.kept),
         rate(g.kept_share), usd(g.cost_per_kept) if g.cost_per_kept is not None else
         "unpriced" if g.unpriced else "no kept row") for label, g in zip(labels, data.groups, strict=True)))
    return Plot("teachers", title, caption, save(fig, folder, "teachers"), table=table)


def languages(data: RunData, folder: Path) -> Plot:
    title = "Per language"
    caption = ("Per language of the tasks (as their task sets name it): pass rate = resolved / graded attempts; "
               "kept rows = rows in the dataset, each bar labelled with kept rows / attempts.")
    if not data.languages:
        return Plot("languages", title, caption, note="No attempts with a task language recorded for this run yet.")
    plt = pyplot()
    fig, (rates, kept) = plt.subplots(1, 2, figsize=(9, 0.5 * len(data.languages) + 1.8))
    ys = list(range(len(data.languages)))
    rates.barh(ys, [g.pass_rate or 0 for g in data.languages], color=BLUE)
    for y, g in zip(ys, data.languages, strict=True):
        rates.text(g.pass_rate or 0, y, f" {g.passed}/{g.graded}" if g.graded else " not graded", va="center", fontsize=8)
    rates.set_yticks(ys, [g.label for g in data.languages])
    rates.set_xlim(0, 1.25)
    rates.set_xlabel("pass rate (resolved / graded)")
    kept.barh(ys, [g.kept for g in data.languages], color=KEPT)
    for y, g in zip(ys, data.languages, strict=True):
        kept.text(g.kept, y, f" {g.kept}/{g.attempts}", va="center", fontsize=8)
    kept.set_yticks(ys, [""] * len(ys))
    kept.set_xlim(0, max(g.kept for g in data.languages) * 1.4 + 1)
    kept.set_xlabel("rows kept")
    table = Table(("language", "attempts", "graded", "resolved", "pass rate", "rows kept"), tuple(
        (g.label, readable(g.attempts), readable(g.graded), readable(g.passed), rate(g.pass_rate), readable(g.kept))
        for g in data.languages))
    return Plot("languages", title, caption, save(fig, folder, "languages"), table=table)


SECTIONS: tuple[Callable[[RunData, Path], Plot], ...] = (
    funnel, pass_rates, over_time, kept_vs_dropped, exit_reasons, teachers, languages,
    row_lengths, trained_share, reward_spread, mixed_groups,
)
"""The report's sections in page order."""


def draw(data: RunData, folder: Path) -> list[Plot]:
    """Every section's PNG into `folder` (made if missing); a PNG left by an earlier draw of a
    section that now has nothing to show is removed, so the folder holds this run's plots only."""
    folder.mkdir(parents=True, exist_ok=True)
    plots = [section(data, folder) for section in SECTIONS]
    for plot in plots:
        if plot.image is None:
            (folder / f"{plot.name}.png").unlink(missing_ok=True)
    return plots
