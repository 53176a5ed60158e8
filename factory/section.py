"""The base of every configuration section: unknown keys are errors, and each field's docstring
is its documentation (shown in errors, `--help` and the docs)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
