"""Render-plus-mask throughput beside the raw tokenizer's, on synthetic agent trajectories.

    .venv/bin/python bench/render_bench.py            # 50 MB of rendered text
    .venv/bin/python bench/render_bench.py --mb 5     # a quick run

Trajectories are made in memory (no network, no files): a system prompt, an issue, then turns of
reasoning, a short message and tool calls, answered by tool output (source files, test logs,
grep hits), so about a sixth of the tokens are the assistant's, as in real coding trajectories.
Raw encode is the Qwen3 tokenizer on the rendered text of the same trajectories, batched the same
way; the ratio is what rendering, segment-wise encoding, the full-render check and masks cost.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from factory.records import Message, ToolCall
from factory.render import Thinking, build_renderer
from factory.render.qwen3 import layout
from factory.render.vocab import qwen3_encoder

T = TypeVar("T")

WORDS = [
    "the", "value", "parser", "field", "returns", "None", "when", "config", "path", "test", "fails",
    "because", "index", "list", "dict", "self", "error", "raise", "import", "module", "function",
    "class", "method", "argument", "default", "timezone", "encoding", "résumé", "naïve", "données",
    "数据", "ошибка",
]
CODE = [
    "def {w}(self, {v}: int = 0) -> list[str]:",
    "    if {v} is None:",
    "        raise ValueError(f\"bad {w}: {{{v}!r}}\")",
    "    return [x.{w}() for x in self.{v}s if x]",
    "class {W}({W}Base):",
    "    {v} = field(default_factory=dict)",
    "import {w}.{v} as {v}",
    "# {w} the {v} before returning",
    "        {v}[{n}] = {w}({v}, key=\"{w}\")",
]
TOOLS = [
    {"type": "function", "function": {"name": "bash", "description": "Run a shell command.",
     "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}},
    {"type": "function", "function": {"name": "edit", "description": "Replace text in a file.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "old": {"type": "string"},
                                                     "new": {"type": "string"}}}}},
]


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def code(rng: random.Random, lines: int) -> str:
    out = []
    for _ in range(lines):
        w, v = rng.choice(WORDS), rng.choice(WORDS)
        out.append(rng.choice(CODE).format(w=w, v=v, W=w.capitalize(), n=rng.randint(0, 99)))
    return "\n".join(out)


def tool_output(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.5:
        return "\n".join(f"{i + 1:5d}\t{line}" for i, line in enumerate(code(rng, rng.randint(20, 160)).split("\n")))
    if kind < 0.8:
        tests = [f"tests/test_{rng.choice(WORDS)}.py::test_{rng.choice(WORDS)} PASSED" for _ in range(rng.randint(5, 40))]
        return "\n".join(tests) + f"\n===== {rng.randint(1, 9)} failed, {rng.randint(10, 99)} passed in 1.2s ====="
    return "\n".join(f"src/{rng.choice(WORDS)}.py:{rng.randint(1, 999)}: {code(rng, 1)}" for _ in range(rng.randint(3, 30)))


def trajectory(rng: random.Random) -> list[Message]:
    messages = [
        Message(role="system", content=prose(rng, 300)),
        Message(role="user", content=prose(rng, 120) + "\n\n```python\n" + code(rng, 15) + "\n```"),
    ]
    for turn in range(rng.randint(15, 45)):
        calls = []
        for k in range(1 if rng.random() < 0.85 else 2):
            if rng.random() < 0.7:
                args: dict[str, Any] = {"cmd": f"grep -rn {rng.choice(WORDS)} src/ | head -{rng.randint(5, 50)}"}
                calls.append(ToolCall(id=f"c{turn}_{k}", name="bash", arguments=json.dumps(args)))
            else:
                args = {"path": f"src/{rng.choice(WORDS)}.py", "old": code(rng, 3), "new": code(rng, 4)}
                calls.append(ToolCall(id=f"c{turn}_{k}", name="edit", arguments=json.dumps(args)))
        # a third of the turns without reasoning, so the header/content boundary check runs too
        reasoning = prose(rng, rng.randint(20, 120)) if rng.random() < 0.67 else None
        content = prose(rng, rng.randint(5, 40))
        messages.append(Message(role="assistant", content=content, reasoning=reasoning, tool_calls=calls))
        messages.extend(Message(role="tool", content=tool_output(rng), tool_call_id=c.id) for c in calls)
    messages.append(Message(role="assistant", content=prose(rng, 30), reasoning=prose(rng, 40)))
    return messages


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=50.0, help="megabytes of rendered text (default 50)")
    parser.add_argument("--batch", type=int, default=64, help="trajectories per tokenizer call")
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()

    rng = random.Random(opts.seed)
    convs: list[tuple[list[Message], list[dict[str, Any]]]] = []
    texts: list[str] = []
    size = 0
    while size < opts.mb * 1e6:
        messages = trajectory(rng)
        text = "".join(p.text for p in layout(messages, TOOLS, Thinking.last_query))
        convs.append((messages, TOOLS))
        texts.append(text)
        size += len(text.encode("utf-8"))
    print(f"{len(convs)} trajectories, {size / 1e6:.1f} MB of rendered text")

    encoder = qwen3_encoder()
    renderer = build_renderer(template="qwen3")
    renderer.render_batch(convs[:2])  # warm-up: thread pool, caches

    t0 = time.perf_counter()
    raw_tokens = sum(len(ids) for batch in batches(texts, opts.batch) for ids in encoder.encode_raw(list(batch)))
    raw_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    tokens = trained = tool = failed = 0
    for batch in batches(convs, opts.batch):
        for row in renderer.render_batch(batch):
            if isinstance(row, Exception):
                failed += 1
                continue
            tokens += row.num_tokens
            trained += row.assistant_tokens
            tool += row.tool_tokens
    render_s = time.perf_counter() - t0

    print(f"raw encode      {raw_tokens:>12,} tokens  {raw_s:7.2f} s  {raw_tokens / raw_s:>12,.0f} tokens/s")
    print(f"render + mask   {tokens:>12,} tokens  {render_s:7.2f} s  {tokens / render_s:>12,.0f} tokens/s")
    print(f"overhead        {render_s / raw_s:.2f}x the raw encode time "
          f"(render+mask runs at {raw_s / render_s:.0%} of raw speed)")
    print(f"assistant share {trained / tokens:.1%}, tool-output share {tool / tokens:.1%}, failed rows {failed}")
    if tokens != raw_tokens or failed:
        raise SystemExit("render and raw encode disagree on the token count: see above")


if __name__ == "__main__":
    main()
