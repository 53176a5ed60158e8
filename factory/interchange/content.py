"""Message content as the formats write it: text, or a list of typed parts (chat completions,
Anthropic, the Responses API, ATIF 1.6), read as the text a row can carry.

An image cannot go into a text row: its part becomes `[image: WHERE]`, so the row still says
that the model was shown one at that point.
"""

from __future__ import annotations

from typing import Any

TEXT_PARTS = ("text", "input_text", "output_text")
IMAGE_PARTS = ("image", "image_url", "input_image")


def _image_where(part: dict[str, Any]) -> str:
    source = part.get("source") if isinstance(part.get("source"), dict) else {}
    url = part.get("image_url")
    url = url.get("url") if isinstance(url, dict) else url
    where = source.get("path") or source.get("url") or url or "inline"
    return where if isinstance(where, str) and not where.startswith("data:") else "inline"


def text_of(content: Any) -> str | None:
    """The content's text (parts joined, images named), or None when it is neither text nor parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    out = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and part.get("type", "text") in TEXT_PARTS:
            out.append(str(part.get("text") or ""))
        elif isinstance(part, dict) and part.get("type") in IMAGE_PARTS:
            out.append(f"[image: {_image_where(part)}]")
    return "".join(out)
