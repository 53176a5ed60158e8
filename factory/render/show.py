"""A render for people to check by eye: decoded from the ids, trained spans marked.

What is shown is decoded from `input_ids` run by run of equal mask, so it is what a trainer will
see, not what the template meant to print. Trained text (mask 1) sits between `⟦` and `⟧` and is
green on a terminal; everything else is out of the loss.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from rich.console import Console
from rich.text import Text

from factory.render.pieces import Rendered

OPEN, CLOSE = "⟦", "⟧"


def mask_runs(r: Rendered, decode: Callable[[Sequence[int]], str]) -> Iterator[tuple[str, bool]]:
    """(decoded text, trained) for each run of tokens with the same mask bit."""
    start = 0
    ids, mask = r.input_ids, r.assistant_masks
    for i in range(1, len(ids) + 1):
        if i == len(ids) or mask[i] != mask[start]:
            yield decode(ids[start:i]), bool(mask[start])
            start = i


def marked_text(r: Rendered, decode: Callable[[Sequence[int]], str]) -> str:
    """The whole render with trained runs between ⟦ and ⟧ (the golden files' format)."""
    return "".join(f"{OPEN}{text}{CLOSE}" if train else text for text, train in mask_runs(r, decode))


def summary(r: Rendered) -> str:
    def share(part: int) -> float:
        return part / r.num_tokens if r.num_tokens else 0.0

    return (f"{r.num_tokens} tokens, {r.assistant_tokens} trained ({share(r.assistant_tokens):.1%}), "
            f"{r.tool_tokens} tool output ({share(r.tool_tokens):.1%})")


def show(r: Rendered, decode: Callable[[Sequence[int]], str], console: Console, header: str = "") -> None:
    out = Text()
    for text, train in mask_runs(r, decode):
        if train:
            out.append(OPEN, style="bold green")
            out.append(text, style="green")
            out.append(CLOSE, style="bold green")
        else:
            out.append(text, style="dim")
    if header:
        console.print(header, style="bold", markup=False, highlight=False)
    console.print(f"trained text is between {OPEN} and {CLOSE}; the rest is masked out of the loss",
                  style="italic", markup=False, highlight=False)
    console.print(out, highlight=False, soft_wrap=True, end="" if out.plain.endswith("\n") else "\n")
    console.print(summary(r), style="bold", markup=False, highlight=False)
