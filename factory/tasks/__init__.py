"""Task sources: SWE-smith, SWE-bench / SWE-Gym and local task sets, as one `Task` record."""

from factory.tasks.rows import BadRow, swesmith_image, task_from_row
from factory.tasks.sources import LoadReport, load_tasks, load_taskset

__all__ = ["BadRow", "LoadReport", "load_tasks", "load_taskset", "swesmith_image", "task_from_row"]
