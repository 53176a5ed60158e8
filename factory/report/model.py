"""What the report holds: one run's numbers as read from its warehouse, and the plots drawn
from them. Plain records with no plotting library behind them, so the dataset card can name
its plots without loading matplotlib."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


def readable(n: float) -> str:
    """A count as a reader takes it in: 950, 12.5k, 400k, 1.2M (never 400000)."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= size:
            value = n / size
            return f"{value:.1f}".removesuffix(".0") + suffix if abs(value) < 100 else f"{value:.0f}{suffix}"
    return f"{n:.0f}" if float(n).is_integer() else f"{n:.2f}"


@dataclass(frozen=True)
class Link:
    """A link in a table cell: to a page written beside the report (a relative `href`)."""

    text: str
    href: str


Cell = str | tuple[Link, ...]
"""A table cell: text, or links (none: an empty cell)."""


@dataclass(frozen=True)
class Table:
    """A figure's numbers, shown under it on the page: what the PNG draws, readable as text."""

    header: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]


@dataclass(frozen=True)
class Plot:
    """One section of the report: a title, a caption that says what each rate is out of, and
    the PNG drawn for it (a file name next to the page), or `note` when there was nothing to draw;
    `table` holds the numbers behind the PNG. A section that is a table alone has neither."""

    name: str
    title: str
    caption: str
    image: str | None = None
    note: str = ""
    table: Table | None = None


@dataclass(frozen=True)
class Stage:
    stage: str
    remaining: int
    dropped: int | None


@dataclass(frozen=True)
class DropCount:
    filter: str
    reason: str
    attempts: int


@dataclass(frozen=True)
class TaskRate:
    instance_id: str
    graded: int
    passed: int
    pass_rate: float | None
    band: str
    attempts: int = 0
    kept: int = 0


@dataclass(frozen=True)
class RowTokens:
    """One kept row's exact length as the renderer made it (the dataset's `num_tokens`, and
    `assistant_tokens`: the tokens in the loss)."""

    instance_id: str
    teacher: str
    attempt_index: int
    num_tokens: int
    assistant_tokens: int

    @property
    def trained_share(self) -> float:
        return self.assistant_tokens / self.num_tokens if self.num_tokens else 0.0


@dataclass(frozen=True)
class SpreadPoint:
    """One graded attempt in its group (one task, one teacher), as the `reward_spread` query has
    it: the standard deviation of reward over the group so far, and whether it is mixed yet."""

    instance_id: str
    teacher: str
    finished_at: datetime | None
    nth: int
    reward_std: float
    mixed: bool


@dataclass(frozen=True)
class MixedGroups:
    """The `mixed_groups` query's row for one teacher, or the whole run (`teacher` = `(all)`)."""

    teacher: str
    groups: int
    mixed: int
    share_mixed: float
    mean_reward_std: float | None
    all_passed: int
    all_failed: int


@dataclass(frozen=True)
class AttemptPoint:
    """One attempt as the time, kept-vs-dropped and exit plots need it."""

    started_at: datetime | None
    finished_at: datetime | None
    kept: bool | None
    cost_usd: float | None
    n_turns: int
    total_tokens: int
    exit: str
    outcome: str


@dataclass(frozen=True)
class GroupRow:
    """One teacher (or teacher and harness) of the run, or one language of its tasks."""

    label: str
    scripted: bool
    attempts: int
    graded: int
    passed: int
    kept: int
    cost_usd: float | None
    unpriced: int

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None

    @property
    def kept_share(self) -> float:
        return self.kept / self.attempts if self.attempts else 0.0

    @property
    def cost_per_kept(self) -> float | None:
        """NULL while any attempt is unpriced, as in the `cost_per_kept` query."""
        return self.cost_usd / self.kept if self.kept and not self.unpriced and self.cost_usd is not None else None


@dataclass
class RunData:
    run_id: str
    funnel: list[Stage] = field(default_factory=list)
    drops: list[DropCount] = field(default_factory=list)
    tasks: list[TaskRate] = field(default_factory=list)
    attempts: list[AttemptPoint] = field(default_factory=list)
    groups: list[GroupRow] = field(default_factory=list)
    group_by: str = "teacher"
    """`teacher`, or `teacher / harness` when the warehouse records a harness."""
    languages: list[GroupRow] = field(default_factory=list)
    """The same numbers per language of the tasks (empty for a warehouse that records none)."""
    rows: list[RowTokens] = field(default_factory=list)
    """Kept rows with their exact token counts (empty before a build, or for a warehouse that records none)."""
    max_length: int | None = None
    """The length limit the run was built under (see `data.run_settings`); None when it has none."""
    spread: list[SpreadPoint] = field(default_factory=list)
    mixed: list[MixedGroups] = field(default_factory=list)

    @property
    def scripted(self) -> bool:
        return any(g.scripted for g in self.groups)

    @property
    def decided(self) -> list[AttemptPoint]:
        return [a for a in self.attempts if a.kept is not None]
