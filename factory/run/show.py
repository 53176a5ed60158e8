"""`factory show`: a run's summary, or one trajectory a person can read."""

from __future__ import annotations

import json
from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from factory.records import Attempt
from factory.run.folder import RunStore


def show_run(console: Console, store: RunStore) -> None:
    meta = store.meta()
    attempts = store.attempts()
    console.print(f"[bold]run[/] {store.run_id}  status={meta.get('status')}  resumed={meta.get('resumed', 0)}")
    console.print(f"  command   {escape(meta.get('command', ''))}")
    console.print(f"  attempts  {len(attempts)} in {store.attempts_dir}")
    by_teacher: dict[str, Counter] = {}
    for a in attempts:
        by_teacher.setdefault(a.key.teacher, Counter())[a.outcome] += 1
    for teacher, counts in sorted(by_teacher.items()):
        total = sum(counts.values())
        console.print(f"  {teacher}: {counts['resolved']}/{total} resolved  " + escape(
            ", ".join(f"{k} {v}" for k, v in counts.most_common() if k != "resolved")))
    build = store.folder / "build.json"
    if build.exists():
        data = json.loads(build.read_text())
        console.print("  funnel    " + " -> ".join(f"{name} {n}" for name, n in data["funnel"]))
        console.print(f"  dataset   {data['out_dir']} ({data['rows']} rows)")
    console.print(escape("  one attempt: factory show RUN INSTANCE[/TEACHER]/INDEX"))


def show_attempt(console: Console, attempt: Attempt, width: int = 600) -> None:
    t, k = attempt.trajectory, attempt.key
    label = " [scripted teacher]" if t and t.scripted else ""
    console.print(f"[bold]{escape(k.instance_id)}[/] {escape(k.teacher)}#{k.index}{escape(label)}  {attempt.outcome}")
    if t is None:
        console.print(escape(attempt.error_class or ""))
        return
    cost = "unknown" if t.cost_usd is None else f"${t.cost_usd:.4f}"
    console.print(f"  model {escape(t.model)}  exit {t.exit}  turns {len(t.turns)}  cost {cost}  {t.wall_seconds:.1f}s")
    for message in t.messages:
        if message.role == "assistant":
            body = (f"[dim]{escape(message.reasoning)}[/]\n" if message.reasoning else "") + escape(message.content)
            for call in message.tool_calls:
                body += f"\n[cyan]→ {escape(call.name)}[/] {escape(call.arguments[:width])}"
            console.print(Panel(body.strip() or "(no text)", title="assistant", title_align="left", border_style="green"))
        elif message.role == "tool":
            text = message.content if len(message.content) <= width else message.content[:width] + f" … ({len(message.content)} chars)"
            console.print(Panel(escape(text), title=f"tool {escape(message.name or '')}", title_align="left", border_style="dim"))
        else:
            text = message.content if len(message.content) <= width else message.content[:width] + " …"
            console.print(Panel(escape(text), title=message.role, title_align="left", border_style="blue"))
    if attempt.verdict is not None:
        v = attempt.verdict
        failing = [n for n, s in v.tests.items() if s != "passed"]
        console.print(f"[bold]verdict[/] resolved={v.resolved} reason={v.reason} {escape(v.detail)}")
        if failing:
            console.print("  not passed: " + escape(", ".join(failing[:10])))
        for flag in v.flags:
            console.print(f"  flag: {escape(str(flag))}")
    console.print("[bold]patch[/]\n" + escape(t.patch or "(empty)"))
