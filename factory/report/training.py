"""The report's plots for whoever trains on the run: kept rows' length against the run's
`max_length`, the share of each row in the loss, and reward spread within groups for RL.

Row lengths and trained shares are the renderer's exact counts, which the warehouse holds for
kept rows once the run is built; reward spread and mixed groups come from the `reward_spread`
and `mixed_groups` queries. Each section says what it is out of, as the run-level plots do.
"""

from __future__ import annotations

from pathlib import Path

from factory.report.drawing import BLUE, DROPPED, GREY, KEPT, pct, pyplot, rate, readable_axis, save
from factory.report.model import Plot, RunData, Table, readable

NO_ROWS = "No kept rows with exact token counts yet: the run has not been built (`factory build`)."
FAR = 2
"""A `max_length` more than this many times the longest row is named, not drawn: the axis fits the rows."""


def _bins(values: list[float], low: float, high: float, n: int) -> list[tuple[float, float, int]]:
    """(from, to, count) of `n` equal bins over [low, high]; the last bin holds `high` too."""
    width = (high - low) / n or 1.0
    counts = [0] * n
    for v in values:
        counts[min(n - 1, max(0, int((v - low) / width)))] += 1
    return [(low + i * width, low + (i + 1) * width, c) for i, c in enumerate(counts)]


def row_lengths(data: RunData, folder: Path) -> Plot:
    lengths = sorted(r.num_tokens for r in data.rows)
    limit = data.max_length
    over = sum(n > limit for n in lengths) if limit else 0
    title = "Row length against max_length"
    if limit:
        caption = (f"Each kept row's length in tokens, as the renderer made it ({len(lengths)} rows), against "
                   f"max_length = {readable(limit)}: the length filter's limit (filters.length.max_tokens in the "
                   "pipeline the run recorded), which the dataset card gives TRL as max_length. A trainer cuts a row "
                   f"over it: {over} of {len(lengths)} rows ({pct(over, len(lengths))}) are.")
    else:
        caption = (f"Each kept row's length in tokens, as the renderer made it ({len(lengths)} rows). The run has no "
                   "max_length: its length filter is off, so the trainer's own max_length decides what is cut "
                   "(the dataset card sets it to the longest row).")
    if not lengths:
        return Plot("row_lengths", title, caption, note=NO_ROWS)
    caption += (f" Shortest {readable(lengths[0])}, median {readable(lengths[len(lengths) // 2])}, "
                f"longest {readable(lengths[-1])} tokens.")
    drawn = limit is not None and limit <= FAR * lengths[-1]
    if limit and not drawn:
        caption += f" max_length is beyond the axis: the longest row is {pct(lengths[-1], limit)} of it."
    high = max(lengths[-1], limit if drawn and limit else 0)
    low = 0 if drawn else lengths[0]  # without the limit on it, the axis spans the rows alone
    bins = _bins(lengths, low, high, 20)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 3.4))
    colours = [DROPPED if limit and start >= limit else BLUE for start, _, _ in bins]
    bars = ax.bar([s for s, _, _ in bins], [c for _, _, c in bins], width=bins[0][1] - bins[0][0], align="edge", color=colours,
                  edgecolor="white")
    ax.bar_label(bars, labels=[str(c) if c else "" for _, _, c in bins], fontsize=8)
    if drawn:
        ax.axvline(limit, color=DROPPED, linestyle="--", label=f"max_length {readable(limit)}")
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.25), frameon=False)
    pad = (high - low) * 0.03 or max(1.0, high * 0.05)  # rows of one length still get an axis
    ax.set_xlim(low - (pad if high == low else 0), high + pad)
    ax.set_ylim(0, max(c for _, _, c in bins) * 1.2)
    ax.set_xlabel("row length (tokens)")
    ax.set_ylabel("kept rows")
    ax.yaxis.get_major_locator().set_params(integer=True)
    readable_axis(ax.xaxis)
    table = Table(("row length (tokens)", "kept rows", "% of rows"), (
        *((f"{readable(round(s))}-{readable(round(e))}", str(c), pct(c, len(lengths))) for s, e, c in bins if c),
        *(((f"over max_length ({readable(limit)})", str(over), pct(over, len(lengths))),) if limit else ())))
    return Plot("row_lengths", title, caption, save(fig, folder, "row_lengths"), table=table)


def trained_share(data: RunData, folder: Path) -> Plot:
    shares = sorted(r.trained_share for r in data.rows)
    total = sum(r.num_tokens for r in data.rows)
    trained = sum(r.assistant_tokens for r in data.rows)
    title = "Trained share per row"
    caption = (f"Per kept row ({len(shares)} rows), the share of its tokens in the loss: assistant_tokens / num_tokens "
               "(the assistant's turns as the chat template marks them; prompts and tool output are masked). Over "
               f"all rows, {readable(trained)} of {readable(total)} tokens are trained ({rate(trained / total if total else None)}).")
    if not shares:
        return Plot("trained_share", title, caption, note=NO_ROWS)
    bins = _bins(shares, 0.0, 1.0, 20)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 3.2))
    bars = ax.bar([s for s, _, _ in bins], [c for _, _, c in bins], width=0.05, align="edge", color=KEPT,
                  edgecolor="white")
    ax.bar_label(bars, labels=[str(c) if c else "" for _, _, c in bins], fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, max(c for _, _, c in bins) * 1.2)
    ax.xaxis.set_major_formatter(lambda value, _pos: f"{value:.0%}")
    ax.set_xlabel("trained share of the row (assistant_tokens / num_tokens)")
    ax.set_ylabel("kept rows")
    ax.yaxis.get_major_locator().set_params(integer=True)
    table = Table(("trained share", "kept rows", "% of rows"), tuple(
        (f"{s:.0%}-{e:.0%}", str(c), pct(c, len(shares))) for s, e, c in bins if c))
    return Plot("trained_share", title, caption, save(fig, folder, "trained_share"), table=table)


def reward_spread(data: RunData, folder: Path) -> Plot:
    points = sorted((p for p in data.spread if p.finished_at is not None), key=lambda p: (p.finished_at, p.nth))
    title = "Reward spread within groups over time"
    caption = ("A group is one task sampled by one teacher (GRPO's group: one prompt, one policy); its spread is the "
               "standard deviation of reward (1 resolved, else 0) over its graded attempts so far (the reward_spread "
               "query): 0 when all passed or all failed, which gives GRPO no advantage, at most 0.5. The line is the "
               "mean spread over the groups with two or more graded attempts, by minutes since the first graded "
               "attempt finished; dots are each group as it grew. A spread that falls as the run goes on warns of "
               "collapse before pass rates move.")
    if not points:
        return Plot("reward_spread", title, caption, note="No graded attempts recorded for this run yet.")
    start = points[0].finished_at
    latest: dict[tuple[str, str], tuple[float, bool]] = {}
    line: list[tuple[float, int, float, int]] = []  # minutes, groups, mean spread, mixed groups
    for p in points:
        if p.nth >= 2:
            latest[(p.instance_id, p.teacher)] = (p.reward_std, p.mixed)
        if latest:
            spreads = [s for s, _ in latest.values()]
            line.append(((p.finished_at - start).total_seconds() / 60, len(latest), sum(spreads) / len(spreads),
                         sum(m for _, m in latest.values())))
    if not line:
        return Plot("reward_spread", title, caption, note="No group has two graded attempts yet: no spread to show.")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 3.4))
    dots = [((p.finished_at - start).total_seconds() / 60, p.reward_std) for p in points if p.nth >= 2]
    ax.scatter([m for m, _ in dots], [s for _, s in dots], s=12, color=GREY, alpha=0.5, label="a group's spread")
    ax.step([m for m, *_ in line], [s for _, _, s, _ in line], where="post", color=BLUE,
            label="mean spread over groups")
    ax.set_ylim(0, 0.55)  # the spread of a 0/1 reward is at most 0.5
    ax.set_xlim(0, max(m for m, *_ in line) * 1.02 or 1.0)
    ax.set_xlabel("minutes since the first graded attempt finished")
    ax.set_ylabel("std of reward within group")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncols=2, frameon=False)
    marks = sorted({round(len(line) * k / 10) for k in range(1, 11)} - {0})  # ten points along the run
    table = Table(("minutes", "groups (2+ graded)", "mean spread", "mixed groups"), tuple(
        (f"{line[i - 1][0]:.1f}", readable(line[i - 1][1]), f"{line[i - 1][2]:.3f}",
         f"{line[i - 1][3]} ({pct(line[i - 1][3], line[i - 1][1])})") for i in marks))
    return Plot("reward_spread", title, caption, save(fig, folder, "reward_spread"), table=table)


def mixed_groups(data: RunData, folder: Path) -> Plot:
    rows = sorted(data.mixed, key=lambda m: (m.teacher != "(all)", m.teacher))  # the whole run first
    whole = next((m for m in rows if m.teacher == "(all)"), None)
    title = "Mixed groups"
    caption = ("Groups (one task, one teacher) with two or more graded attempts, and how many are mixed: both a "
               "resolved and an unresolved attempt (the mixed_groups query). Only a mixed group gives group-relative "
               "RL (GRPO) a nonzero advantage; all passed and all failed groups have nothing to learn from."
               + (f" Over the run: {whole.mixed} of {whole.groups} groups mixed ({rate(whole.share_mixed)})."
                  if whole else ""))
    if not rows:
        return Plot("mixed_groups", title, caption, note="No group has two graded attempts yet.")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 0.5 * len(rows) + 1.4))
    ys = list(range(len(rows)))[::-1]
    bars = ax.barh(ys, [m.share_mixed for m in rows], color=BLUE)
    ax.bar_label(bars, labels=[f" {rate(m.share_mixed)} ({m.mixed}/{m.groups})" for m in rows], fontsize=8)
    ax.set_yticks(ys, [m.teacher for m in rows])
    ax.set_xlim(0, 1.25)  # a share is at most 1; the rest is room for the labels
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1])
    ax.set_xlabel("share of groups mixed (mixed / groups with 2+ graded attempts)")
    table = Table(("teacher", "groups", "mixed", "share mixed", "mean spread", "all passed", "all failed"), tuple(
        (m.teacher, readable(m.groups), readable(m.mixed), rate(m.share_mixed),
         "-" if m.mean_reward_std is None else f"{m.mean_reward_std:.3f}", readable(m.all_passed),
         readable(m.all_failed)) for m in rows))
    return Plot("mixed_groups", title, caption, save(fig, folder, "mixed_groups"), table=table)
