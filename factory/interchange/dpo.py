"""Preference pairs for DPO, in TRL's conversational preference layout: one object a line,

    {"prompt": [system, user], "chosen": [assistant, tool, ..., assistant],
     "rejected": [assistant, tool, ..., assistant], "tools": [...], "instance_id", "chosen_id", "rejected_id"}

`chosen` is a run of a task that the hidden tests resolved, `rejected` one of the same task that they
did not; both answer the same prompt (the messages before the first assistant turn) with the same
tools, so the pair differs only in what the model did. Attempts whose prompts or tools differ (other
harnesses) are never paired. Every resolved and every failed run of a task is used: the shorter side
is cycled until the longer is used up, in the dataset's order.

Messages keep the OpenAI layout of the `messages` config, with `reasoning_content` where kept and the
arguments printed as Qwen3's template prints them (`json.dumps` of the object), so a template that
prints the string as it is renders a pair as factory's renderer renders the same conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from factory.interchange import openai_chat
from factory.interchange.shape import ExportRow
from factory.records import Message

LINE_KEYS = {"prompt", "chosen", "rejected", "tools", "instance_id", "chosen_id", "rejected_id"}


def _message(m: Message) -> dict[str, Any]:
    out = m.to_openai()
    out.pop("name", None)
    for call in out.get("tool_calls", []):
        function = call["function"]
        function["arguments"] = json.dumps(json.loads(function["arguments"]), ensure_ascii=False)
    return out


def _split(row: ExportRow) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(prompt, completion): the messages before the first assistant turn, then the rest up to the
    last assistant turn."""
    first = next(i for i, m in enumerate(row.messages) if m.role == "assistant")
    try:
        messages = [_message(m) for m in row.messages]
    except json.JSONDecodeError as exc:
        raise ValueError(f"{row.label}: a tool call's arguments are not JSON ({exc})") from None
    return messages[:first], messages[first:]


def pairs(rows: list[ExportRow]) -> Iterator[tuple[str, dict[str, Any] | str]]:
    """(label, line) for every pair, or (label, why) for a run that could not be paired."""
    groups: dict[str, tuple[list[ExportRow], list[ExportRow]]] = {}
    for row in rows:
        try:
            prompt, _ = _split(row)
        except ValueError as exc:
            yield row.label, str(exc)
            continue
        key = json.dumps([row.row.instance_id, prompt, row.row.tools], sort_keys=True)
        groups.setdefault(key, ([], []))[0 if row.row.resolved else 1].append(row)
    for chosen, rejected in groups.values():
        if not chosen or not rejected:
            for row in chosen + rejected:
                yield row.label, f"no {'failed' if chosen else 'resolved'} run of the task with the same prompt and tools to pair with"
            continue
        for k in range(max(len(chosen), len(rejected))):
            good, bad = chosen[k % len(chosen)], rejected[k % len(rejected)]
            prompt, good_turns = _split(good)
            _, bad_turns = _split(bad)
            yield f"{good.label} > {bad.label}", {
                "prompt": prompt, "chosen": good_turns, "rejected": bad_turns, "tools": good.row.tools,
                "instance_id": good.row.instance_id, "chosen_id": good.label, "rejected_id": bad.label,
            }


def _without_reasoning(messages: list[Any]) -> list[Any]:
    return [{k: v for k, v in m.items() if k != "reasoning_content"} if isinstance(m, dict) else m for m in messages]


def check_line(line: Any) -> list[str]:
    """Every way `line` breaks the layout above; empty when TRL's DPOTrainer can read it."""
    if not isinstance(line, dict):
        return ["a line must be a JSON object"]
    problems = [f"{key}: not a key of the format" for key in sorted(set(line) - LINE_KEYS)]
    prompt = line.get("prompt")
    if not isinstance(prompt, list) or not prompt or any(not isinstance(m, dict) or m.get("role") == "assistant" for m in prompt):
        return [*problems, "prompt: must be the messages before the first assistant turn"]
    for side in ("chosen", "rejected"):
        turns = line.get(side)
        if not isinstance(turns, list) or not turns or not all(isinstance(m, dict) for m in turns):
            problems.append(f"{side}: must be a non-empty list of messages")
            continue
        if turns[0].get("role") != "assistant" or turns[-1].get("role") != "assistant":
            problems.append(f"{side}: must start and end with an assistant turn")
        as_chat = {"messages": _without_reasoning(prompt + turns), "tools": line.get("tools", [])}
        problems += [f"{side}: {p}" for p in openai_chat.check_line(as_chat)]
    if line.get("chosen") == line.get("rejected"):
        problems.append("chosen and rejected are the same")
    return problems
