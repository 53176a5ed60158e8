"""Output: the kept attempts as a Hugging Face dataset (Parquet), its card, and the push.

    OUT/README.md         card: Hub metadata + how the data was made and how to load it
    OUT/messages/*.parquet    TRL conversational rows + run metadata
    OUT/tokenized/*.parquet   renderer output (input_ids, assistant_masks, labels)
    OUT/plots/*.png           the run's plots from its warehouse (factory.report), shown by the card
"""

from factory.output.build import (
    CLI_OVERRIDES,
    BuildSettings,
    BuildSummary,
    DrawPlots,
    Tokenize,
    build_dataset,
)
from factory.output.card import (
    SIZE_CATEGORIES,
    CardMeta,
    RenderInfo,
    build_card,
    size_category,
)
from factory.output.hub import PushError, PushResult, push
from factory.output.render_hooks import RenderHooks, render_hooks
from factory.output.rows import MESSAGES_FEATURES, TOKENIZED_FEATURES, TokenizedRow
from factory.output.validate import check_card, validate_card
from factory.output.writer import MESSAGES, PLOTS, TOKENIZED, WrittenDataset, write_dataset

__all__ = [
    "CLI_OVERRIDES",
    "MESSAGES",
    "MESSAGES_FEATURES",
    "PLOTS",
    "SIZE_CATEGORIES",
    "TOKENIZED",
    "TOKENIZED_FEATURES",
    "BuildSettings",
    "BuildSummary",
    "CardMeta",
    "DrawPlots",
    "PushError",
    "PushResult",
    "RenderHooks",
    "RenderInfo",
    "Tokenize",
    "TokenizedRow",
    "WrittenDataset",
    "build_card",
    "build_dataset",
    "check_card",
    "push",
    "render_hooks",
    "size_category",
    "validate_card",
    "write_dataset",
]
