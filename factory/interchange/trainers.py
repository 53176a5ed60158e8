"""What a trainer needs beside an export to train on it, written next to the file.

    openai     FILE.trl.py (TRL's SFTTrainer), FILE.axolotl.yaml (an axolotl `datasets:` block)
    sharegpt   dataset_info.json (LLaMA-Factory's entry, merged into the folder's file),
               FILE.llamafactory.yaml (the training arguments the rows need)
    dpo        FILE.trl.py (TRL's DPOTrainer)

Rows trained on one turn only (`--rows step|last`) say so in each: OpenAI's `weight` becomes axolotl's
`message_field_training` and TRL's prompt/completion split; LLaMA-Factory trains the last turn alone
with `mask_history`. The JSON lines load through `datasets.Json` columns: a plain JSON load would
merge every tool schema's keys into one struct and hand the template `null`s the rows never had.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from factory.errors import UsageError

_LOAD = '''import json

from datasets import Dataset, Features, Json, List

FILE = {file!r}  # written by `factory export`; a path relative to this script's folder
with open(Path(__file__).parent / FILE, encoding="utf-8") as lines:
    rows = [json.loads(line) for line in lines]
'''

_SFT = _LOAD + '''dataset = Dataset.from_list([{{"messages": r["messages"], "tools": r["tools"]}} for r in rows],
                           features=Features({{"messages": List(Json()), "tools": List(Json())}}))
'''

_SFT_EVERY_TURN = _SFT + '''
def train(model: str, **args):
    """SFTTrainer on every assistant turn (`assistant_only_loss` needs a template TRL can mark)."""
    from trl import SFTConfig, SFTTrainer

    config = SFTConfig(**{{"output_dir": "coding-agent-sft", "assistant_only_loss": True, "max_length": None, **args}})
    return SFTTrainer(model=model, train_dataset=dataset, args=config)
'''

_SFT_ONE_TURN = _SFT + '''
def prompt_completion(row):
    """The turn with weight 1 is the completion, what comes before it the prompt: TRL trains the
    completion only (`completion_only_loss`, on by default)."""
    messages = [{{k: v for k, v in m.items() if k != "weight"}} for m in row["messages"]]
    return {{"prompt": messages[:-1], "completion": messages[-1:], "tools": row["tools"]}}


dataset = dataset.map(prompt_completion, remove_columns=["messages"],
                      features=Features({{"prompt": List(Json()), "completion": List(Json()), "tools": List(Json())}}))


def train(model: str, **args):
    """SFTTrainer on each row's last assistant turn."""
    from trl import SFTConfig, SFTTrainer

    config = SFTConfig(**{{"output_dir": "coding-agent-sft", "max_length": None, **args}})
    return SFTTrainer(model=model, train_dataset=dataset, args=config)
'''

_DPO = _LOAD + '''pairs = [{{k: r[k] for k in ("prompt", "chosen", "rejected", "tools")}} for r in rows]
dataset = Dataset.from_list(pairs, features=Features({{k: List(Json()) for k in ("prompt", "chosen", "rejected", "tools")}}))


def train(model: str, **args):
    """DPOTrainer on the pairs: TRL renders prompt, prompt + chosen and prompt + rejected with the
    model's chat template and `tools`, and learns chosen over rejected."""
    from trl import DPOConfig, DPOTrainer

    config = DPOConfig(**{{"output_dir": "coding-agent-dpo", "max_length": None, **args}})
    return DPOTrainer(model=model, train_dataset=dataset, args=config)
'''


def _header(command: str) -> str:
    return f"# {command}\n# Import it, or run it: `python -i FILE` leaves `dataset` and `train(model)` at hand.\nfrom pathlib import Path\n"


def trl_code(file: str, format_name: str, every_turn: bool, command: str) -> str:
    body = _DPO if format_name == "dpo" else _SFT_EVERY_TURN if every_turn else _SFT_ONE_TURN
    return _header(command) + body.format(file=file)


def axolotl_block(file: str, every_turn: bool) -> dict:
    dataset: dict = {"path": file, "ds_type": "json", "type": "chat_template", "field_messages": "messages",
                     "field_tools": "tools", "roles_to_train": ["assistant"], "train_on_eos": "turn"}
    if not every_turn:
        dataset["message_field_training"] = "weight"  # OpenAI's weight 0/1 on each assistant turn
    return {"datasets": [dataset]}


def llamafactory_entry(file: str) -> dict:
    return {"file_name": file, "formatting": "sharegpt",
            "columns": {"messages": "conversations", "system": "system", "tools": "tools"},
            "tags": {"role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt",
                     "observation_tag": "observation", "function_tag": "function_call"}}


def _dataset_info(folder: Path, name: str, entry: dict) -> str:
    path = folder / "dataset_info.json"
    try:
        info = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not JSON ({exc.msg}); move it away or fix it, then export again") from exc
    return json.dumps({**info, name: entry}, indent=2, ensure_ascii=False) + "\n"


def sidecars(out: Path, format_name: str, every_turn: bool, command: str) -> dict[Path, str]:
    """Each file to write beside `out` and its text."""
    file, stem = out.name, out.with_suffix("")
    if format_name == "sharegpt":
        args = {"dataset": stem.name, "dataset_dir": ".", "stage": "sft"}
        if not every_turn:
            args["mask_history"] = True  # train the last turn of each row only
        return {out.parent / "dataset_info.json": _dataset_info(out.parent, stem.name, llamafactory_entry(file)),
                stem.with_name(stem.name + ".llamafactory.yaml"): f"# {command}\n" + yaml.safe_dump(args, sort_keys=False)}
    if format_name not in ("openai", "dpo"):
        return {}  # a trajectory format (atif) is read by agent tools, not trainers
    files = {stem.with_name(stem.name + ".trl.py"): trl_code(file, format_name, every_turn, command)}
    if format_name == "openai":
        files[stem.with_name(stem.name + ".axolotl.yaml")] = (
            f"# {command}\n# paste into an axolotl config; `path` is relative to where axolotl runs\n"
            + yaml.safe_dump(axolotl_block(str(out), every_turn), sort_keys=False))
    return files
