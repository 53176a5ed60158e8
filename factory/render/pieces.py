"""What a template lays out (pieces) and what the tokenizer makes of it (a `Rendered` row).

A template never tokenizes: it returns pieces of text, each marked as trained or not and as a
control token or plain text. Only template structure is ever a control token; every string that
comes from a message or a tool schema is plain text, whatever it contains.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from factory.errors import FactoryError


class RenderError(FactoryError):
    """A trajectory cannot be rendered exactly; the row is dropped with this reason, never fudged."""

    def __init__(self, message: str, *, index: int | None = None, reason: str = "render_error"):
        where = "" if index is None else f"message {index}: "
        super().__init__(f"{where}{message}")
        self.index, self.reason = index, reason


@dataclass(frozen=True, slots=True)
class Piece:
    text: str
    train: bool = False
    """In the loss: text the assistant wrote (reasoning, content, tool calls, its `<|im_end|>`)."""
    control: bool = False
    """`text` is one control token of the vocabulary (e.g. `<|im_start|>`), emitted by id."""
    role: str = ""
    """The role of the message the piece renders (`system`, `user`, `assistant`, `tool`)."""
    index: int = -1
    """The message index, for error messages; -1 for template-level text."""


class Layout:
    """Collects pieces for one conversation; `lit` splits template text on control tokens."""

    def __init__(self, controls: Iterable[str]):
        self._controls = sorted(controls, key=len, reverse=True)
        self.pieces: list[Piece] = []

    def text(self, text: str, *, train: bool = False, role: str = "", index: int = -1) -> None:
        if text:
            self.pieces.append(Piece(text, train, False, role, index))

    def control(self, token: str, *, train: bool = False, role: str = "", index: int = -1) -> None:
        self.pieces.append(Piece(token, train, True, role, index))

    def lit(self, text: str, *, train: bool = False, role: str = "", index: int = -1) -> None:
        """Template text: control token strings inside it are control tokens, as the real
        tokenizer makes them when it reads the rendered template."""
        start = 0
        while start < len(text):
            hit = min(
                ((pos, tok) for tok in self._controls if (pos := text.find(tok, start)) >= 0),
                default=None,
            )
            if hit is None:
                break
            pos, tok = hit
            self.text(text[start:pos], train=train, role=role, index=index)
            self.control(tok, train=train, role=role, index=index)
            start = pos + len(tok)
        self.text(text[start:], train=train, role=role, index=index)


@dataclass(slots=True)
class Rendered:
    """One trajectory in the student's template: ids, the loss mask and what they came from."""

    input_ids: list[int]
    assistant_masks: list[int]
    pieces: list[Piece] = field(default_factory=list)
    tool_tokens: int = 0
    """Tokens of tool-result turns, wrappers included."""

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.pieces)

    @property
    def num_tokens(self) -> int:
        return len(self.input_ids)

    @property
    def assistant_tokens(self) -> int:
        return sum(self.assistant_masks)

    @property
    def labels(self) -> list[int]:
        return [t if m else -100 for t, m in zip(self.input_ids, self.assistant_masks, strict=True)]
