"""Rendering: trajectories into the student's chat template, with exact loss masks.

    RenderConfig ─► build_renderer ─► layout (qwen3 | chatml | hf) ─► pieces ─► encode ─► Rendered
                                                                      (checked against the full render)

Public API: `build_renderer`, `RenderConfig`, `Thinking`, `Rendered`, `RenderError`, and the
`tokenized` dataset config (`tokenized_rows`, `tokenized_dataset`, `RenderStats`).
"""

from factory.render.config import RenderConfig, Thinking
from factory.render.dataset import (
    CONFIG_NAME,
    RenderStats,
    render_trajectories,
    tokenized_dataset,
    tokenized_features,
    tokenized_row,
    tokenized_rows,
)
from factory.render.pieces import Rendered, RenderError
from factory.render.renderer import TEMPLATES, BatchRenderer, build_renderer

__all__ = [
    "CONFIG_NAME",
    "TEMPLATES",
    "BatchRenderer",
    "RenderConfig",
    "RenderError",
    "RenderStats",
    "Rendered",
    "Thinking",
    "build_renderer",
    "render_trajectories",
    "tokenized_dataset",
    "tokenized_features",
    "tokenized_row",
    "tokenized_rows",
]
