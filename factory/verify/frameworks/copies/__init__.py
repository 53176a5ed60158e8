"""Copies of hidden tests outside Python, one writer per language (`base.py`)."""
