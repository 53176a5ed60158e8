"""Hand-written expected renders: the text, and between ⟦ ⟧ exactly the tokens in the loss."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory.render import build_renderer
from factory.render.show import CLOSE, OPEN, marked_text
from tests.render.render_cases import CASES

GOLDEN = Path(__file__).parent / "golden"
FILES = sorted(GOLDEN.glob("*.txt"))


def _render(name: str):
    template, thinking, case = name.split("-")
    renderer = build_renderer(template=template, thinking=thinking)
    messages, tools = CASES[case]
    return renderer, renderer.render(messages, tools)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_render_and_mask_match_the_golden_file(path: Path) -> None:
    renderer, rendered = _render(path.stem)
    assert marked_text(rendered, renderer.decode) == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_trained_spans_decode_to_the_golden_assistant_text(path: Path) -> None:
    renderer, rendered = _render(path.stem)
    golden = path.read_text(encoding="utf-8")
    expected = [chunk.split(CLOSE)[0] for chunk in golden.split(OPEN)[1:]]
    ids, mask = rendered.input_ids, rendered.assistant_masks
    spans: list[list[int]] = []
    for i, (tok, bit) in enumerate(zip(ids, mask, strict=True)):
        if bit:
            if i == 0 or not mask[i - 1]:
                spans.append([])
            spans[-1].append(tok)
    assert [renderer.decode(s) for s in spans] == expected
    assert renderer.decode(ids) == golden.replace(OPEN, "").replace(CLOSE, "")


def test_every_case_has_a_golden_file_for_the_default_policy() -> None:
    missing = [c for c in CASES if not (GOLDEN / f"qwen3-last_query-{c}.txt").exists()]
    assert missing == []
