"""Task sources: every task set's rows (SWE-smith in every language, SWE-bench, SWE-bench v5 /
Multilingual, SWE-rebench V2, Multi-SWE-bench, local task sets) as one `Task` record."""

from factory.tasks.fields import BadRow, Unsupported
from factory.tasks.formats import FORMATS, task_from_row
from factory.tasks.rows import swesmith_image
from factory.tasks.sources import LoadReport, load_tasks, load_taskset

__all__ = ["FORMATS", "BadRow", "LoadReport", "Unsupported", "load_tasks", "load_taskset", "swesmith_image",
           "task_from_row"]
