"""Rendering: trajectories into the student's chat template, with exact loss masks.

    RenderConfig ─► build_renderer ─► layout (qwen3 | chatml | hf) ─► pieces ─► encode ─► Rendered
                                                                      (checked against the full render)

Public API: `build_renderer`, `RenderConfig`, `Thinking`, `Rendered`, `RenderError`. The
dataset's `tokenized` config is written by the build step (`factory.output`, docs/dataset.md).
"""

from factory.render.config import RenderConfig, Thinking
from factory.render.pieces import Rendered, RenderError
from factory.render.renderer import TEMPLATES, BatchRenderer, build_renderer

__all__ = [
    "TEMPLATES",
    "BatchRenderer",
    "RenderConfig",
    "RenderError",
    "Rendered",
    "Thinking",
    "build_renderer",
]
