"""The offline Qwen3 vocabulary: real ids, real encodings, and a refusal of the wrong file."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from factory.errors import UsageError
from factory.render.vocab import (
    QWEN3_CONTROL_IDS,
    TokenizersEncoder,
    qwen3_encoder,
    qwen3_tokenizer_path,
)


def test_control_ids_are_qwen3s() -> None:
    enc = qwen3_encoder()
    assert {t: enc.control_id(t) for t in QWEN3_CONTROL_IDS} == {
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
    assert enc.regular_size == 151_643


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("Hello world", [9707, 1879]),
        ("Hello, world!", [9707, 11, 1879, 0]),
        ("assistant\n", [77091, 198]),
        ("\n\n", [271]),
    ],
)
def test_known_encodings(text: str, ids: list[int]) -> None:
    assert qwen3_encoder().encode_texts([text]) == [ids]


def test_raw_tokenizer_reads_control_text_but_plain_encoding_does_not() -> None:
    enc = qwen3_encoder()
    text = "<|im_start|>user\nhi<|im_end|>"
    assert enc.encode_raw([text]) == [[151644, 872, 198, 6023, 151645]]
    plain = enc.encode_texts([text])[0]
    assert max(plain) < 151_643
    assert enc.decode(plain) == text


@pytest.mark.parametrize("text", ["naïve café ☕ 日本語", "tabs\tand  spaces \n\n\n end", "emoji 👩‍💻 and e\u0301"])
def test_decode_round_trips(text: str) -> None:
    enc = qwen3_encoder()
    # NFC is part of the tokenizer, so a decomposed é comes back composed
    assert enc.decode(enc.encode_texts([text])[0]) == unicodedata.normalize("NFC", text)


def test_a_tokenizer_with_other_control_ids_is_refused(tmp_path: Path) -> None:
    spec = json.loads(qwen3_tokenizer_path().read_text(encoding="utf-8"))
    for token in spec["added_tokens"]:
        if token["content"] == "<think>":
            token["id"] = 151_999
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(UsageError, match="<think> has id 151999, expected 151667"):
        TokenizersEncoder(path, "Qwen3", QWEN3_CONTROL_IDS)
