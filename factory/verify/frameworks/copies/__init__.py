"""Copies of hidden tests outside Python, one writer per language (`base.py`)."""
from factory.verify.frameworks.copies import (
    go,  # noqa: F401
    rust,  # noqa: F401
)
