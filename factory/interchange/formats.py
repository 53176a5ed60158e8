"""Other agents' trajectory files, read into `Trajectory` records (`factory import`).

    mini-swe-agent   *.traj.json: 2.x `{info, messages, trajectory_format}` (info.submission is the
                     patch), or the older plain message list (no patch: verified only by
                     its source, `factory import --trust-source`)
    swe-agent        *.traj: `{history, info, replay_config}` (info.submission is the patch)
    swe-smith-sft    *.jsonl: `{"messages", "instance_id"}` a line, SWE-smith's released SFT data
                     (no patch: verified only by its source, `--trust-source`)
    openhands        *.jsonl: OpenHands' evaluation output, a run a line: `history` (events),
                     `test_result.git_patch`, `metadata.llm_config.model`, `metrics`
    atif             *.json / *.jsonl: Harbor's ATIF trajectories (atif.py); a patch only where
                     `extra.patch` holds one

Each reader takes one file and returns its trajectories; a file it cannot read raises
`BadTrajectoryFile` naming the file and the field, which the importer reports and skips.
Messages keep the scaffold they were made in (text-format tool calls stay text, function calls
stay calls), so a row teaches that scaffold; `harness` says which it was. Each trajectory lists
the tool schemas its model was shown, from the file or the harness (tools.py), so that every
call it makes names a listed tool.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factory.errors import UsageError
from factory.interchange import atif
from factory.interchange import tools as harness_tools
from factory.records import Exit, Message, ToolCall, Trajectory, Turn
from factory.registry import Registry

SUBMIT_SENTINELS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
"""mini-swe-agent's submission command echoes one of these (the second in its older versions)."""


class BadTrajectoryFile(UsageError):
    """A file that is not in the format it was said to be in."""

    def __init__(self, path: Path, field: str, what: str):
        super().__init__(f"{path}: {field}: {what}")


@dataclass(frozen=True)
class Reader:
    name: str
    patterns: tuple[str, ...]
    """File names it reads when given a folder."""
    read: Callable[[Path], list[Trajectory]]


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BadTrajectoryFile(path, "file", f"cannot be read ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise BadTrajectoryFile(path, "file", f"not JSON (line {exc.lineno}: {exc.msg})") from exc


def _text(content: Any, path: Path, where: str) -> str:
    """A message's content: a string, or a list of parts whose `text` parts are joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and p.get("type", "text") in ("text", "input_text", "output_text"))
    raise BadTrajectoryFile(path, where, f"content must be text or a list of parts, not {type(content).__name__}")


def _calls(raw: Any, path: Path, where: str) -> list[ToolCall]:
    calls = []
    for k, call in enumerate(raw or []):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise BadTrajectoryFile(path, f"{where}.tool_calls[{k}]", "needs function.name")
        arguments = function.get("arguments", "{}")
        calls.append(ToolCall(id=str(call.get("id") or f"call_{k}"), name=function["name"],
                              arguments=arguments if isinstance(arguments, str) else json.dumps(arguments)))
    return calls


def chat_messages(raw: Any, path: Path, field: str = "messages") -> list[Message]:
    """OpenAI-layout messages (as mini-swe-agent and SWE-agent write them) as records."""
    if not isinstance(raw, list) or not raw:
        raise BadTrajectoryFile(path, field, "must be a non-empty list of messages")
    out = []
    for i, m in enumerate(raw):
        where = f"{field}[{i}]"
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise BadTrajectoryFile(path, where, "must be an object with a role")
        role = m["role"]
        if role == "exit":  # mini-swe-agent 2.x ends with the submission, which info holds too
            continue
        if role not in ("system", "user", "assistant", "tool"):
            raise BadTrajectoryFile(path, f"{where}.role", f"{role!r} is not system, user, assistant or tool")
        ids = m.get("tool_call_ids") or [m.get("tool_call_id")]  # SWE-agent lists the ids it answers
        reasoning = m.get("reasoning_content") or m.get("thinking")
        out.append(Message(role=role, content=_text(m.get("content"), path, where),
                           reasoning=reasoning if isinstance(reasoning, str) else None,
                           tool_calls=_calls(m.get("tool_calls"), path, where) if role == "assistant" else [],
                           tool_call_id=ids[0] if role == "tool" else None))
    return out


def _model_of(info: dict[str, Any]) -> str:
    model = (info.get("config") or {}).get("model") or {}
    return str(model.get("model_name") or model.get("name") or "unknown")


def _cost(stats: Any) -> list[Turn]:
    """The run's cost as one turn (the files do not say what each call cost)."""
    cost = stats.get("instance_cost") if isinstance(stats, dict) else None
    return [Turn(cost_usd=float(cost))] if isinstance(cost, int | float) else []


def _exit(status: Any) -> Exit:
    text = str(status or "").lower()
    if text.startswith("submitted"):
        return Exit.submitted
    if "limit" in text or "cost" in text or "turn" in text or "step" in text:
        return Exit.max_turns
    if "format" in text:
        return Exit.format_error
    if "timeout" in text:
        return Exit.timeout
    return Exit.crashed if text else Exit.submitted


def _instance_from_name(path: Path) -> str:
    name = path.name
    for suffix in (".traj.json", ".traj", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _chat_layout(item: Any) -> Any:
    """A message of mini-swe-agent's Responses-API models (a whole `response` for the model's turn,
    `function_call_output` for a result) in the chat layout; a chat message as it is."""
    if not isinstance(item, dict) or "role" in item and item.get("type", "message") == "message":
        return item
    if item.get("type") == "function_call_output":
        return {"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output")}
    output = item.get("output")
    if not isinstance(output, list):
        return item
    parts = [i for i in output if isinstance(i, dict)]
    text = [c for i in parts if i.get("type") == "message" for c in i.get("content") or []]
    reasoning = "".join(s.get("text", "") for i in parts if i.get("type") == "reasoning" for s in i.get("summary") or [])
    calls = [{"id": i.get("call_id") or i.get("id"), "function": {"name": i.get("name"), "arguments": i.get("arguments")}}
             for i in parts if i.get("type") == "function_call"]
    return {"role": "assistant", "content": text, "tool_calls": calls, "reasoning_content": reasoning or None}


def _mini_swe_agent_tools(raw: dict[str, Any], messages: list[Message]) -> list[dict[str, Any]]:
    """Its models that call tools are given `bash` alone; its text-format models no tool at all."""
    known = [t for t in raw.get("tools") or [] if isinstance(t, dict)]
    if any(m.tool_calls for m in messages):
        known.append(harness_tools.MINI_SWE_AGENT_BASH)
    return harness_tools.complete(messages, known)


def read_mini_swe_agent(path: Path) -> list[Trajectory]:
    data = _json(path)
    if isinstance(data, list):  # the older format: the message list alone
        messages = chat_messages(data, path, "(the message list)")
        said = "".join(m.content for m in messages[-3:])
        exit = Exit.submitted if any(s in said for s in SUBMIT_SENTINELS) else Exit.max_turns
        return [Trajectory(instance_id=_instance_from_name(path), teacher="mini-swe-agent", model="unknown",
                           messages=messages, tools=harness_tools.complete(messages, []), exit=exit,
                           harness="mini-swe-agent")]  # no patch: the importer says so, or trusts it
    if not isinstance(data, dict) or "messages" not in data:
        raise BadTrajectoryFile(path, "file", "expected mini-swe-agent's {info, messages, trajectory_format} or a message list")
    info = data.get("info") or {}
    if not isinstance(info, dict):
        raise BadTrajectoryFile(path, "info", "must be an object")
    submission = info.get("submission")
    if submission is not None and not isinstance(submission, str):
        raise BadTrajectoryFile(path, "info.submission", "must be the patch as text")
    instance = data.get("instance_id") or info.get("instance_id") or _instance_from_name(path)
    model = _model_of(info)
    raw = data["messages"]
    messages = chat_messages([_chat_layout(m) for m in raw] if isinstance(raw, list) else raw, path)
    return [Trajectory(instance_id=str(instance), teacher=model, model=model,
                       messages=messages, tools=_mini_swe_agent_tools(data, messages),
                       patch=submission or "", exit=_exit(info.get("exit_status")), turns=_cost(info.get("model_stats")),
                       harness="mini-swe-agent")]


def read_swe_agent(path: Path) -> list[Trajectory]:
    data = _json(path)
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        raise BadTrajectoryFile(path, "history", "missing: expected a SWE-agent .traj file {history, info, ...}")
    info = data.get("info") or {}
    try:
        replay = json.loads(data["replay_config"]) if isinstance(data.get("replay_config"), str) else {}
    except json.JSONDecodeError:
        replay = {}
    model = str(((replay.get("agent") or {}).get("model") or {}).get("name") or "unknown")
    instance = (replay.get("problem_statement") or {}).get("id") or _instance_from_name(path)
    submission = info.get("submission") if isinstance(info, dict) else None
    messages = chat_messages(data["history"], path, "history")
    version = info.get("swe_agent_version") if isinstance(info, dict) else None
    tools = harness_tools.complete(messages, harness_tools.swe_agent_tools(version, replay))
    return [Trajectory(instance_id=str(instance), teacher=model, model=model,
                       messages=messages, tools=tools, patch=submission or "",
                       exit=_exit(info.get("exit_status")), turns=_cost(info.get("model_stats")), harness="swe-agent")]


def _jsonl(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(`line N`, row) for each non-empty line, every row a JSON object."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadTrajectoryFile(path, "file", f"cannot be read ({exc})") from exc
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadTrajectoryFile(path, f"line {n}", f"not JSON ({exc.msg})") from exc
        if not isinstance(row, dict) or not isinstance(row.get("instance_id"), str):
            raise BadTrajectoryFile(path, f"line {n}: instance_id", "missing: each line is one run with its instance_id")
        rows.append((f"line {n}", row))
    return rows


def read_swe_smith_sft(path: Path) -> list[Trajectory]:
    out = []
    for where, row in _jsonl(path):  # XML-style calls in the text, as released; a row's own `tools` if any
        messages = chat_messages(row.get("messages"), path, f"{where}: messages")
        known = [t for t in row.get("tools") or [] if isinstance(t, dict)]
        out.append(Trajectory(instance_id=row["instance_id"], teacher="swe-smith", model="unknown", messages=messages,
                              tools=harness_tools.complete(messages, known), exit=Exit.submitted,
                              harness="swe-smith-sft"))  # no patch: the importer says so, or trusts it
    return out


def _openhands_messages(history: Any, path: Path, where: str) -> tuple[list[Message], list[dict[str, Any]], bool]:
    """The conversation in OpenHands' event stream: the model's own responses (kept with each
    action's `tool_call_metadata`, one message per response however many actions it made), the
    tool results that answer them, the system prompt and the user's messages, and the tools the
    system event says the model was given. Other events (workspace recalls, environment notices)
    were never shown to the model as turns."""
    if not isinstance(history, list) or not history:
        raise BadTrajectoryFile(path, f"{where}: history", "must be a non-empty list of events")
    messages: list[Message] = []
    tools: list[dict[str, Any]] = []
    responses: set[str] = set()
    finished = False
    for i, event in enumerate(history):
        if not isinstance(event, dict):
            raise BadTrajectoryFile(path, f"{where}: history[{i}]", "must be an event object")
        meta = event.get("tool_call_metadata") or {}
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        text = args.get("content") or event.get("message") or ""
        if "action" in event:
            if event["action"] == "system":
                messages.append(Message(role="system", content=str(text)))
                tools += [t for t in args.get("tools") or [] if isinstance(t, dict)]
            elif event.get("source") == "user" and event["action"] == "message":
                messages.append(Message(role="user", content=str(text)))
            elif event.get("source") == "agent":
                finished = finished or event["action"] == "finish"
                response = meta.get("model_response") or {}
                if response:
                    if response.get("id") in responses:
                        continue
                    responses.add(response.get("id"))
                    reply = ((response.get("choices") or [{}])[0]).get("message") or {}
                    calls = _calls(reply.get("tool_calls"), path, f"{where}: history[{i}].model_response")
                    messages.append(Message(role="assistant", content=_text(reply.get("content"), path, where),
                                            tool_calls=calls))
                elif event["action"] == "message":
                    messages.append(Message(role="assistant", content=str(text)))
        elif "observation" in event and meta.get("tool_call_id"):
            messages.append(Message(role="tool", content=str(event.get("content") or ""),
                                    tool_call_id=str(meta["tool_call_id"]), name=meta.get("function_name")))
    return messages, tools, finished


def read_openhands(path: Path) -> list[Trajectory]:
    out = []
    for where, row in _jsonl(path):
        messages, tools, finished = _openhands_messages(row.get("history"), path, where)
        metadata = row.get("metadata") or {}
        model = str((metadata.get("llm_config") or {}).get("model") or "unknown")
        patch = (row.get("test_result") or {}).get("git_patch") or ""
        error = str(row.get("error") or "")
        exit = Exit.submitted if finished else Exit.max_turns if "maximum iteration" in error or not error else Exit.crashed
        out.append(Trajectory(instance_id=row["instance_id"], teacher=model, model=model, messages=messages,
                              tools=harness_tools.complete(messages, tools), patch=patch, exit=exit,
                              turns=_cost({"instance_cost": (row.get("metrics") or {}).get("accumulated_cost")}),
                              harness="openhands"))
    return out


def read_atif(path: Path) -> list[Trajectory]:
    """`*.json`: one trajectory, as Harbor writes `trajectory.json`; `*.jsonl`: one a line, as
    `factory export --format atif` writes them."""
    if path.suffix == ".jsonl":
        found = []
        for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                found += [(f"line {n}: ", json.loads(text))] if text.strip() else []
            except json.JSONDecodeError as exc:
                raise BadTrajectoryFile(path, f"line {n}", f"not JSON ({exc.msg})") from exc
    else:
        found = [("", _json(path))]
    out = []
    for where, data in found:
        try:
            out.append(atif.trajectory_of(data, _instance_from_name(path)))
        except atif.AtifError as exc:
            raise BadTrajectoryFile(path, where + exc.where, str(exc).removeprefix(f"{exc.where}: ")) from exc
    return out


READERS: Registry[Reader] = Registry("trajectory format")
"""`factory import --format`: a new format is its `read_*` and one `add`."""
READERS.add("mini-swe-agent", Reader("mini-swe-agent", ("*.traj.json",), read_mini_swe_agent))
READERS.add("swe-agent", Reader("swe-agent", ("*.traj",), read_swe_agent))
READERS.add("swe-smith-sft", Reader("swe-smith-sft", ("*.jsonl",), read_swe_smith_sft))
READERS.add("openhands", Reader("openhands", ("*.jsonl",), read_openhands))
READERS.add("atif", Reader("atif", ("*.json", "*.jsonl"), read_atif))


def reader_named(name: str) -> Reader:
    """`READERS.get`: an unknown name lists the valid ones."""
    return READERS.get(name)


def files_of(path: Path, reader: Reader) -> list[Path]:
    """The file itself, or the files in a folder (recursively) that the format's names match."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UsageError(f"{path}: no such file or folder")
    found = sorted({f for pattern in reader.patterns for f in path.rglob(pattern) if f.is_file()})
    if not found:
        raise UsageError(f"{path}: no {' or '.join(reader.patterns)} files for --format {reader.name}")
    return found
