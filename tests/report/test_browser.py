"""The report page as a person sees it: opened in a real headless browser (Debian's chromium,
which `make test` installs through `make browser`), from a run folder made by the real
warehouse writer and build."""

from __future__ import annotations

import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest
from PIL import Image

from factory.report.plots import BLUE
from tests.installed import require

CHROMIUM = Path("/usr/bin/chromium")
TITLES = ["Funnel and drop reasons", "Pass rate over tasks", "Attempts, kept rows and cost over time",
          "Turns and tokens: kept vs dropped", "Exit reasons", "Per teacher / harness", "Per language",
          "Row length against max_length", "Trained share per row", "Reward spread within groups over time",
          "Mixed groups", "Per task"]
TABLE_ONLY = ["Per task"]
BAR_BLUE = tuple(int(BLUE[i:i + 2], 16) for i in (1, 3, 5))  # the funnel's bars: seen only in the PNGs


@pytest.fixture(scope="module", autouse=True)
def _chromium_installed() -> None:  # before the run is built: a skip costs nothing
    require(CHROMIUM, "browser")


@pytest.fixture(scope="module")
def page(built_run) -> Path:
    out = subprocess.run([sys.executable, "-m", "factory.cli", "report", str(built_run.folder)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return built_run.folder / "report" / "index.html"


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    profile.mkdir(parents=True)
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=180,
    )


def test_the_page_renders_its_plots_in_a_browser(page, tmp_path):
    shot = tmp_path / "shot.png"
    out = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,3000", page.as_uri())
    assert shot.is_file(), out.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20)
    assert len(colours) > 200, f"only {len(colours)} colours: the page looks blank"
    bar_pixels = sum(n for n, rgb in colours if rgb == BAR_BLUE)
    assert bar_pixels > 5000, f"{bar_pixels} pixels of the funnel's bars: the plots did not load"


def test_every_section_title_is_in_the_page(page, tmp_path):
    out = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert out.returncode == 0, out.stderr[-2000:]
    titles = [t for t in TITLES if f"<h2>{t}</h2>" in out.stdout]
    assert titles == TITLES, out.stdout[:2000]
    assert out.stdout.count("<img ") == len(TITLES) - len(TABLE_ONLY)
    tables = re.findall(r"<table>(.*?)</table>", out.stdout, re.S)
    assert len(tables) == len(TITLES)  # every figure's numbers as text too
    assert all("<td" in re.search(r"<tbody>(.*?)</tbody>", t, re.S).group(1) for t in tables)  # and filled
    assert "<td>resolved</td>" in out.stdout and "<td>verified</td>" not in out.stdout  # one stage a meaning


def test_a_task_links_to_its_trajectory_with_the_trained_text_marked(page, tmp_path):
    out = chromium(tmp_path, "--dump-dom", page.as_uri())
    per_task = re.search(r'<section id="tasks">(.*?)</section>', out.stdout, re.S).group(1)
    href = unescape(re.search(r'<a href="([^"]+)">', per_task).group(1))
    shown = chromium(tmp_path / "trajectory", "--dump-dom", (page.parent / href).as_uri())
    assert shown.returncode == 0, shown.stderr[-2000:]
    trained = re.findall(r'<span class="trained">(.*?)</span>', shown.stdout, re.S)
    assert trained and all(t.startswith("⟦") and t.endswith("⟧") for t in trained)
    assert '<span class="masked">' in shown.stdout
