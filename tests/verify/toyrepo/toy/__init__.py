"""A toy library for the verifier's attack suite."""

from toy.core import add, clamp, parse_pair

__all__ = ["add", "clamp", "parse_pair"]
