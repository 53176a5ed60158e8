"""Copies of hidden tests outside Python, one writer per language (`base.py`)."""
from factory.verify.frameworks.copies import (
    go,  # noqa: F401
    java,  # noqa: F401  (registers "java")
    javascript,  # noqa: F401  (registers "javascript", "typescript")
    rust,  # noqa: F401
)
