"""Load a `factory export --format sharegpt` through LLaMA-Factory's own data pipeline and print, as
JSON, what it made of each line. Run by the LLaMA-Factory venv (`make llamafactory`), never imported:
llamafactory pins datasets, transformers and trl below the project's own.

    cd FOLDER && python llamafactory_load.py REPORT.json TOKENIZER_DIR TEMPLATE NAME...

NAME.llamafactory.yaml (the arguments the export wrote) is completed as a user completes it: a model
(here a tokenizer folder, no weights are read), a template and an output folder. The lines are read
twice: by the sharegpt converter alone (`converted`, one entry per line, a dropped line coming back
with an empty prompt) and by `get_dataset`, as `llamafactory-cli train` reads them (`encoded`).
"""

from __future__ import annotations

import json
import sys
import tempfile
from itertools import groupby
from pathlib import Path

import yaml
from datasets import load_dataset
from llamafactory.data import get_dataset, get_template_and_fix_tokenizer
from llamafactory.data.converter import get_dataset_converter
from llamafactory.data.parser import get_dataset_list
from llamafactory.extras.constants import IGNORE_INDEX
from llamafactory.hparams import get_train_args
from llamafactory.model import load_tokenizer


def trained_spans(tokenizer, input_ids: list[int], labels: list[int]) -> list[str]:
    """The text of each run of tokens the loss is computed on, in order."""
    runs = groupby(zip(input_ids, labels, strict=True), key=lambda pair: pair[1] != IGNORE_INDEX)
    return [tokenizer.decode([i for i, _ in run]) for trained, run in runs if trained]


def main(name: str, tokenizer_dir: str, template_name: str) -> dict:
    args = yaml.safe_load(Path(f"{name}.llamafactory.yaml").read_text(encoding="utf-8"))
    args |= {"model_name_or_path": tokenizer_dir, "template": template_name, "do_train": True,
             "output_dir": tempfile.mkdtemp(), "report_to": "none", "overwrite_cache": True,
             "cutoff_len": 1_000_000}  # no truncation: every turn must reach the labels
    model_args, data_args, training_args, _, _ = get_train_args(args)
    tokenizer_module = load_tokenizer(model_args)
    tokenizer = tokenizer_module["tokenizer"]
    template = get_template_and_fix_tokenizer(tokenizer, data_args)

    [attr] = get_dataset_list(data_args.dataset, data_args.dataset_dir)
    lines = load_dataset("json", data_files=str(Path(data_args.dataset_dir) / attr.dataset_name), split="train")
    converter = get_dataset_converter(attr.formatting, attr, data_args)
    converted = [converter(line) for line in lines]

    try:
        encoded = get_dataset(template, model_args, data_args, training_args, stage="sft", **tokenizer_module)["train_dataset"]
    except RuntimeError as exc:  # "Cannot find valid samples": it dropped every line, which the count shows
        print(exc, file=sys.stderr)
        encoded = []
    return {
        "lines": len(lines),
        "converted": [{"roles": [m["role"] for m in c["_prompt"] + c["_response"]],
                       "response": [m["content"] for m in c["_response"]],
                       "system": c["_system"], "tools": c["_tools"]} for c in converted],
        "encoded": [{"text": tokenizer.decode(row["input_ids"]),
                     "trained": trained_spans(tokenizer, row["input_ids"], row["labels"])} for row in encoded],
    }


if __name__ == "__main__":  # the report goes to a file: LLaMA-Factory prints a training example on stdout
    report, tokenizer_dir, template_name, *names = sys.argv[1:]
    loaded = {name: main(name, tokenizer_dir, template_name) for name in names}
    Path(report).write_text(json.dumps(loaded, ensure_ascii=False), encoding="utf-8")
