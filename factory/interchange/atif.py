"""Harbor's Agent Trajectory Interchange Format (ATIF, RFC 0001, v1.4), in and out.

    trajectory_of(obj, name)  one trajectory -> a Trajectory record (formats.read_atif reads files)
    to_line(row)      a kept row -> one ATIF trajectory (`factory export --format atif`)
    check_line(obj)   the RFC's rules a trajectory must keep -> problems (empty: it fits)

A trajectory is `{schema_version, session_id, agent, steps, final_metrics?, notes?, extra?}`. A
step is a `system` prompt, a `user` message, or an `agent` turn: its message, reasoning, tool
calls (`{tool_call_id, function_name, arguments: {...}}`) and the observation that answered them
(`results: [{source_call_id, content}]`). In the chat layout an agent step is one `assistant`
message followed by one `tool` message per result, in the results' order; a result that answers
no call (an action outside tool calling) becomes a `user` message, as text-format harnesses
deliver the environment's feedback.

ATIF has no field for a task id, a patch, an exit or the tools' schemas: factory writes them in
the root's and the agent's `extra` (`instance_id`, `patch`, `exit`; `agent.extra.tools`) and reads
them back from there; a file without them takes its instance id from its name and holds no patch
(`factory import --trust-source` for rows their source verified).
"""

from __future__ import annotations

import json
from typing import Any

from factory.interchange import tools as harness_tools
from factory.interchange.content import text_of
from factory.interchange.shape import ExportRow
from factory.records import Exit, Message, ToolCall, Trajectory, Turn, Usage

SCHEMA_VERSION = "ATIF-v1.4"
SOURCES = ("system", "user", "agent")
AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")
"""Step fields the RFC allows on agent steps only."""


class AtifError(ValueError):
    """A trajectory that breaks the format: `where` names the field."""

    def __init__(self, where: str, what: str):
        super().__init__(f"{where}: {what}")
        self.where = where


# ------------------------------------------------------------------------------ in


def _turn(metrics: Any) -> Turn:
    """ATIF's prompt_tokens include the cached ones; factory's input_tokens do not."""
    m = metrics if isinstance(metrics, dict) else {}
    cached = int(m.get("cached_tokens") or 0)
    usage = Usage(input_tokens=max(int(m.get("prompt_tokens") or 0) - cached, 0),
                  output_tokens=int(m.get("completion_tokens") or 0), cache_read_tokens=cached)
    cost = m.get("cost_usd")
    return Turn(usage=usage, cost_usd=float(cost) if isinstance(cost, int | float) else None)


def _text(content: Any, where: str) -> str:
    """A message or a result: text, or (ATIF 1.6) a list of content parts, images named in the text."""
    text = text_of(content)
    if text is None:
        raise AtifError(where, f"must be text or a list of content parts, not {type(content).__name__}")
    return text


def _arguments_in(call: dict[str, Any], where: str) -> str:
    """A call's arguments, an object (as the RFC has them) or the JSON text of one."""
    arguments = call.get("arguments", {})
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        raise AtifError(f"{where}.arguments", "must be an object")
    return json.dumps(parsed, ensure_ascii=False)


def _results(step: dict[str, Any], where: str, names: dict[str, str]) -> list[Message]:
    """A step's observation: a `tool` message per result that answers one of its calls, a `user`
    message per result that answers none (an action outside tool calling, a system operation).

    A step whose calls no result names, but which has results, was answered as a whole (Harbor's
    Terminus sends every keystroke call, then shows the one terminal screen): its results answer
    its last call, and each call before it gets an empty result, so that every call is answered."""
    results = (step.get("observation") or {}).get("results") or []
    if names and results and all(isinstance(r, dict) and r.get("source_call_id") is None for r in results):
        content = "\n".join(_text(r.get("content"), f"{where}.observation.results[{k}].content")
                            for k, r in enumerate(results))
        return [Message(role="tool", content=content if i == len(names) - 1 else "", tool_call_id=call, name=name)
                for i, (call, name) in enumerate(names.items())]
    out = []
    for k, result in enumerate(results):
        if not isinstance(result, dict):
            raise AtifError(f"{where}.observation.results[{k}]", "must be an object")
        answers = result.get("source_call_id")
        content = _text(result.get("content"), f"{where}.observation.results[{k}].content")
        if answers in names:
            out.append(Message(role="tool", content=content, tool_call_id=answers, name=names[answers]))
        elif answers is None:
            out.append(Message(role="user", content=content))
        else:
            raise AtifError(f"{where}.observation.results[{k}].source_call_id", f"{answers!r} answers no call of the step")
    return out


def _agent_step(step: dict[str, Any], where: str) -> list[Message]:
    calls = []
    for k, call in enumerate(step.get("tool_calls") or []):
        if not isinstance(call, dict) or not isinstance(call.get("function_name"), str):
            raise AtifError(f"{where}.tool_calls[{k}]", "needs function_name")
        calls.append(ToolCall(id=str(call.get("tool_call_id") or f"call_{k}"), name=call["function_name"],
                              arguments=_arguments_in(call, f"{where}.tool_calls[{k}]")))
    reasoning = step.get("reasoning_content")
    out = [Message(role="assistant", content=_text(step.get("message"), f"{where}.message"),
                   reasoning=reasoning if isinstance(reasoning, str) else None, tool_calls=calls)]
    return out + _results(step, where, {c.id: c.name for c in calls})


def trajectory_of(data: Any, name: str) -> Trajectory:
    """One ATIF trajectory as a factory `Trajectory`; `name` is its instance id when `extra` has none."""
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise AtifError("(root)", "expected an ATIF trajectory {schema_version, session_id, agent, steps}")
    agent = data.get("agent") if isinstance(data.get("agent"), dict) else {}
    extra = data.get("extra") if isinstance(data.get("extra"), dict) else {}
    messages: list[Message] = []
    turns = []
    model = agent.get("model_name")
    for i, step in enumerate(data["steps"]):
        where = f"steps[{i}]"
        if not isinstance(step, dict) or step.get("source") not in SOURCES:
            raise AtifError(f"{where}.source", f"must be one of {', '.join(SOURCES)}")
        if step["source"] == "agent":
            messages += _agent_step(step, where)
            turns.append(_turn(step.get("metrics")))
            model = model or step.get("model_name")
        else:  # since 1.2 a system step may hold an observation too
            messages.append(Message(role=step["source"], content=_text(step.get("message"), f"{where}.message")))
            messages += _results(step, where, {})
    exit_ = extra.get("exit")
    known = (agent.get("extra") or {}).get("tools") or agent.get("tool_definitions") or []
    model = str(model or "unknown")
    return Trajectory(
        instance_id=str(extra.get("instance_id") or name), teacher=str(extra.get("teacher") or model), model=model,
        messages=messages, tools=harness_tools.complete(messages, [t for t in known if isinstance(t, dict)]),
        patch=str(extra.get("patch") or ""), exit=Exit(exit_) if exit_ in Exit.__members__ else Exit.submitted,
        turns=turns, harness="atif",
    )


# ------------------------------------------------------------------------------ out


def to_line(shaped: ExportRow) -> dict[str, Any]:
    """A row as one ATIF trajectory: a step per system, user and assistant message, each
    assistant turn's tool results in its observation."""
    from factory import __version__

    row = shaped.row
    steps: list[dict[str, Any]] = []
    for k, m in enumerate(shaped.messages):
        if m.role == "tool":
            if not steps or steps[-1]["source"] != "agent":
                raise ValueError(f"messages[{k}]: a tool result that follows no assistant turn has no ATIF step")
            results = steps[-1].setdefault("observation", {"results": []})["results"]
            results.append({"source_call_id": m.tool_call_id, "content": m.content})
            continue
        step: dict[str, Any] = {"step_id": len(steps) + 1, "source": "agent" if m.role == "assistant" else m.role,
                                "message": m.content}
        if step["source"] not in SOURCES:
            raise ValueError(f"messages[{k}]: role {m.role!r} has no ATIF source")
        if m.role == "assistant":
            if m.reasoning:
                step["reasoning_content"] = m.reasoning
            if m.tool_calls:
                step["tool_calls"] = [{"tool_call_id": c.id, "function_name": c.name, "arguments": _arguments(c, k)}
                                      for c in m.tool_calls]
        steps.append(step)
    return {
        "schema_version": SCHEMA_VERSION, "session_id": shaped.label,
        "agent": {"name": "factory", "version": __version__, "extra": {"tools": row.tools}},
        "steps": steps, "final_metrics": {"total_steps": len(steps)},
        "extra": {"instance_id": row.instance_id, "run_id": row.run_id, "teacher": row.teacher,
                  "attempt": row.attempt, "resolved": row.resolved,
                  **({"exit": Exit.submitted.value} if row.resolved else {})},  # a resolved row ended by submitting
    }


def _arguments(call: ToolCall, k: int) -> dict[str, Any]:
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"messages[{k}].tool_calls {call.id}: arguments are not JSON ({exc.msg})") from exc
    if not isinstance(arguments, dict):
        raise ValueError(f"messages[{k}].tool_calls {call.id}: arguments are not a JSON object")
    return arguments


def check_line(line: Any) -> list[str]:
    """What the RFC requires of a trajectory: the root's and the agent's required fields, steps
    numbered from 1, known sources, agent-only fields on agent steps only, calls with an id, a
    name and object arguments, and observation results that answer a call of their own step."""
    if not isinstance(line, dict):
        return ["(root): must be an object"]
    problems = [f"{key}: required" for key in ("schema_version", "session_id", "agent", "steps") if key not in line]
    agent = line.get("agent")
    if isinstance(agent, dict):
        problems += [f"agent.{key}: required string" for key in ("name", "version") if not isinstance(agent.get(key), str)]
    for i, step in enumerate(line.get("steps") or []):
        where = f"steps[{i}]"
        if not isinstance(step, dict):
            problems.append(f"{where}: must be an object")
            continue
        if step.get("step_id") != i + 1:
            problems.append(f"{where}.step_id: {step.get('step_id')!r}, expected {i + 1}")
        if step.get("source") not in SOURCES:
            problems.append(f"{where}.source: must be one of {', '.join(SOURCES)}")
        if not isinstance(step.get("message"), str):
            problems.append(f"{where}.message: required string (may be empty)")
        if step.get("source") != "agent":
            problems += [f"{where}.{key}: only on agent steps" for key in AGENT_ONLY if key in step]
        ids = set()
        for k, call in enumerate(step.get("tool_calls") or []):
            if not isinstance(call, dict) or not isinstance(call.get("tool_call_id"), str) \
                    or not isinstance(call.get("function_name"), str) or not isinstance(call.get("arguments"), dict):
                problems.append(f"{where}.tool_calls[{k}]: needs tool_call_id, function_name and object arguments")
                continue
            ids.add(call["tool_call_id"])
        for k, result in enumerate((step.get("observation") or {}).get("results") or []):
            answers = result.get("source_call_id") if isinstance(result, dict) else None
            if answers is not None and answers not in ids:
                problems.append(f"{where}.observation.results[{k}].source_call_id: {answers!r} is no call of the step")
    return problems

