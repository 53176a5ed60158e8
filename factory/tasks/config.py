"""`tasks:`, the pipeline section that says which tasks to load and how to select them."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator

from factory.section import Section
from factory.tasks.formats import names, unknown


class TasksConfig(Section):
    source: str | list[str]
    """A task-set folder (or a folder of Harbor / Terminal-Bench tasks), a JSONL or Parquet file, or a Hugging Face dataset name; or a list of
    them, whose tasks run together (a mixed-language run: a Python set beside a Go set, ...). Each
    source is read with the same selection; an id in two sources is a duplicate."""
    format: str = "auto"
    """Row schema (`factory.tasks.formats`): swesmith, swebench, swebench-v5, swe-rebench-v2,
    multi-swe-bench, harbor; `auto` reads each row's format from the fields only that format has."""
    split: str = "train"
    """Dataset split, for Hugging Face sources."""
    streaming: bool = False
    """Stream a Hugging Face dataset instead of downloading it whole."""
    limit: int | None = Field(default=None, ge=1)
    """Use at most this many tasks (after selection and shuffling)."""
    limit_per_source: int | None = Field(default=None, ge=1)
    """Use at most this many tasks of each source (after selection and shuffling), so that every
    source of a list has its share before `limit` applies to them all."""
    shuffle_seed: int | None = None
    """Shuffle the tasks with this seed before `limit`; None keeps the source order."""
    include_ids: list[str] = Field(default_factory=list)
    exclude_ids: list[str] = Field(default_factory=list)
    include_repos: list[str] = Field(default_factory=list)
    exclude_repos: list[str] = Field(default_factory=list)
    test_cmd: str | None = None
    """Shell prefix that sets up the test environment, overriding the task set's default."""
    strict: bool = False
    """Fail the load on the first bad row instead of reporting and skipping it."""
    skip_invalid: bool = True
    """Skip tasks that `factory tasks validate` marked broken or flaky."""

    @property
    def sources(self) -> list[str]:
        """The sources, one or several, in the order given."""
        return [self.source] if isinstance(self.source, str) else list(self.source)

    def named(self) -> str:
        """The sources in words, for messages and the card."""
        return ", ".join(self.sources)

    @field_validator("source")
    @classmethod
    def _some_source(cls, source: str | list[str]) -> str | list[str]:
        if isinstance(source, list) and (not source or len(set(source)) < len(source)):
            raise ValueError("a list of sources needs one or more, each once")
        return source

    @field_validator("format")
    @classmethod
    def _known_format(cls, name: str) -> str:
        if name not in names():
            raise ValueError(unknown(name))
        return name


def local_path(source: str, base: Path | None = None) -> Path | None:
    """The source as a local folder or task file, or None when it names a Hugging Face dataset."""
    path = Path(source) if base is None else (base / source)
    return path if path.is_dir() or path.suffix in (".jsonl", ".json", ".parquet") else None
