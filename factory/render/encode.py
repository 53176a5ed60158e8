"""Pieces to token ids and loss masks, checked against the tokenization of the full render.

Pieces are merged into segments (same mask, same message); each segment is encoded on its own, so
every token belongs to exactly one segment and its mask bit is exact. The full render is the text
between control tokens encoded in one go, as a tokenizer reading the whole string would do. The
two agree unless a segment boundary falls where the tokenizer would merge across it (a header
`assistant\\n` followed by content that starts with a newline, say); then the row is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from factory.render.pieces import Piece, Rendered, RenderError


class Encoder(Protocol):
    """A vocabulary: plain text to ids, control tokens by id, ids back to text."""

    name: str

    def encode_texts(self, texts: list[str]) -> list[list[int]]: ...
    def control_id(self, token: str) -> int: ...
    def decode(self, ids: Sequence[int]) -> str: ...


def _segments(pieces: list[Piece]) -> list[Piece]:
    out: list[Piece] = []
    for p in pieces:
        last = out[-1] if out else None
        if (
            last is not None
            and not p.control
            and not last.control
            and (last.train, last.role, last.index) == (p.train, p.role, p.index)
        ):
            out[-1] = Piece(last.text + p.text, p.train, False, p.role, p.index)
        else:
            out.append(p)
    return out


def _runs(segments: list[Piece]) -> list[list[int]]:
    """Positions of the text segments between two control tokens, where more than one."""
    runs: list[list[int]] = []
    current: list[int] = []
    for i, seg in enumerate(segments):
        if seg.control:
            if len(current) > 1:
                runs.append(current)
            current = []
        else:
            current.append(i)
    if len(current) > 1:
        runs.append(current)
    return runs


def encode_batch(conversations: list[list[Piece]], encoder: Encoder) -> list[Rendered | RenderError]:
    """Encode many laid-out conversations with one batched call per pass (the tokenizer
    parallelises inside a batch)."""
    all_segments = [_segments(pieces) for pieces in conversations]
    texts: list[str] = []
    joint: list[str] = []
    for segs in all_segments:
        texts.extend(s.text for s in segs if not s.control)
        joint.extend("".join(segs[i].text for i in run) for run in _runs(segs))
    text_ids = iter(encoder.encode_texts(texts))
    joint_ids = iter(encoder.encode_texts(joint))
    out: list[Rendered | RenderError] = []
    for segs in all_segments:
        seg_ids = [[encoder.control_id(s.text)] if s.control else next(text_ids) for s in segs]
        error: RenderError | None = None
        for run in _runs(segs):
            expected = next(joint_ids)
            error = error or _check_run(segs, seg_ids, run, expected, encoder)
        out.append(error or _assemble(segs, seg_ids))
    return out


def _check_run(
    segs: list[Piece], seg_ids: list[list[int]], run: list[int], expected: list[int], encoder: Encoder
) -> RenderError | None:
    got = [t for i in run for t in seg_ids[i]]
    if got == expected:
        return None
    at = next((k for k, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b), None)
    at = min(len(got), len(expected)) if at is None else at
    bounds: list[tuple[int, int]] = []
    ends = 0
    for k in run[:-1]:
        ends += len(seg_ids[k])
        bounds.append((abs(ends - at), k))
    k = min(bounds)[1]
    seg, after = segs[k], segs[run[run.index(k) + 1]]
    return RenderError(
        f"token boundary drift between {seg.role or 'template'} text ending "
        f"{seg.text[-20:]!r} and {after.role or 'template'} text starting {after.text[:20]!r}: "
        f"the tokenizer merges across the mask boundary ({encoder.decode(expected[at : at + 1])!r}), "
        "so no exact mask exists; fix the message text (e.g. strip its leading newlines)",
        index=after.index if after.index >= 0 else None,
        reason="boundary_drift",
    )


def _assemble(segs: list[Piece], seg_ids: list[list[int]]) -> Rendered:
    ids: list[int] = []
    mask: list[int] = []
    tool = 0
    for seg, sids in zip(segs, seg_ids, strict=True):
        ids.extend(sids)
        mask.extend([int(seg.train)] * len(sids))
        if seg.role == "tool":
            tool += len(sids)
    return Rendered(ids, mask, segs, tool)
