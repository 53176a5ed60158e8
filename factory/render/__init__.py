"""Rendering: trajectories into the student's chat template, with exact loss masks.

    RenderConfig ─► build_renderer ─► layout (qwen3 | chatml | hf) ─► pieces ─► encode ─► Rendered
                                                                      (checked against the full render)

Public API: `build_renderer`, `RenderConfig`, `Thinking`, `Rendered`, `RenderError`. The
dataset's `tokenized` config is written by the build step (`factory.output`, docs/dataset.md).
"""

from importlib import import_module

_WHERE = {
    "RenderConfig": "config", "Thinking": "config", "Rendered": "pieces", "RenderError": "pieces",
    "TEMPLATES": "renderer", "BatchRenderer": "renderer", "build_renderer": "renderer",
}

__all__ = [
    "TEMPLATES",
    "BatchRenderer",
    "RenderConfig",
    "RenderError",
    "Rendered",
    "Thinking",
    "build_renderer",
]


def __getattr__(name: str):
    """Loaded on first use: the tokenizers and templates are heavy, and `factory --help` needs none."""
    if name in _WHERE:
        return getattr(import_module(f"factory.render.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
