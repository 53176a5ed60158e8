"""Reading the report page back: its sections by id, and a section's table as cell text."""

from __future__ import annotations

import re


def sections(page: str) -> dict[str, str]:
    return dict(re.findall(r'<section id="(\w+)">(.*?)</section>', page, re.S))


def table_rows(section: str) -> list[list[str]]:
    """A section's table body, as its cells' text."""
    found = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", section, re.S)]
    return [r for r in found if r]
