"""A small seeded MinHash over action shingles (no dependency: groups are one task's runs).

The Jaccard similarity of two runs is estimated as the share of equal signature slots. Each
slot is the minimum of a universal hash `(a * x + b) mod p` over the run's shingles, with
`a, b` drawn from `random.Random(seed)`, so signatures are the same on every machine.
"""

from __future__ import annotations

import hashlib
import random
from functools import lru_cache

_PRIME = (1 << 61) - 1


@lru_cache(maxsize=16)
def _permutations(num_perm: int, seed: int) -> tuple[tuple[int, int], ...]:
    rng = random.Random(seed)
    return tuple((rng.randrange(1, _PRIME), rng.randrange(0, _PRIME)) for _ in range(num_perm))


def _hash(shingle: str) -> int:
    return int.from_bytes(hashlib.blake2b(shingle.encode(), digest_size=8).digest(), "little")


def shingles(sequence: list[str], size: int) -> set[str]:
    """Every run of `size` consecutive actions (the whole sequence when it is shorter)."""
    if len(sequence) <= size:
        return {"\x1f".join(sequence)}
    return {"\x1f".join(sequence[i : i + size]) for i in range(len(sequence) - size + 1)}


def signature(items: set[str], num_perm: int = 128, seed: int = 1) -> tuple[int, ...]:
    hashes = [_hash(item) for item in items] or [0]
    return tuple(min((a * h + b) % _PRIME for h in hashes) for a, b in _permutations(num_perm, seed))


def similarity(left: tuple[int, ...], right: tuple[int, ...]) -> float:
    """Estimated Jaccard similarity of the two sets the signatures were made from."""
    if len(left) != len(right):
        raise ValueError("signatures of different sizes")
    return sum(x == y for x, y in zip(left, right, strict=True)) / len(left)
