"""What every plot of the report draws with: matplotlib's Agg backend (no display), loaded on
first use, the report's colours, and numbers written as `readable` writes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factory.report.model import readable

BLUE, KEPT, DROPPED, BAND, GREY = "#4c78a8", "#2a9d4b", "#c4473a", "#d9f0df", "#8a8f98"
DPI = 110


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def pct(n: int, total: int) -> str:
    return f"{100 * n / total:.0f}%" if total else "-"


def readable_axis(axis: Any) -> None:
    """Tick labels as `readable` writes numbers (400k, not 400000)."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda value, _pos: readable(value)))


def usd(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}" if value < 1 else f"${readable(value)}"


def rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def save(fig: Any, folder: Path, name: str) -> str:
    file = f"{name}.png"
    fig.tight_layout()
    fig.savefig(folder / file, dpi=DPI)
    pyplot().close(fig)
    return file
