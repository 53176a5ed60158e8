"""Copies of hidden tests outside Python, one writer per language (`base.py`)."""

import factory.verify.frameworks.copies.java  # noqa: F401  (registers "java")
import factory.verify.frameworks.copies.javascript  # noqa: F401  (registers "javascript", "typescript")
