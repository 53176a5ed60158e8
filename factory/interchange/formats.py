"""Other agents' trajectory files, read into `Trajectory` records (`factory import`).

    mini-swe-agent   *.traj.json, *.trajectory.json (Harbor): 1.x/2.x `{info, messages,
                     trajectory_format}` (info.submission is the patch when it is a diff), or
                     the early plain message list (no patch: `factory import --trust-source`)
    swe-agent        *.traj: 0.x and 1.x `{history, info, replay_config?}`
    swe-smith-sft    *.jsonl: `{"messages", "instance_id"}` a line, as SWE-smith's transform and
                     its released dataset write them (no patch: `--trust-source`)
    openhands        *.jsonl: OpenHands' evaluation output, a run a line: `history` of events
                     (2024: [action, observation] pairs; 1.x: its SDK's typed events), the patch
    atif             *.json / *.jsonl: Harbor's ATIF trajectories (atif.py); a patch only where
                     `extra.patch` holds one

A file in a Harbor trial folder (`TRIAL/agent/FILE`) takes its task's name and its verifier's
reward from `TRIAL/result.json`. What a source says against a run without a patch (a reward of
0, `resolved: false`) becomes the trajectory's `error`, so that no flag takes it on trust.

Each reader takes one file and returns its trajectories; a file it cannot read raises
`BadTrajectoryFile` naming the file and the field, which the importer reports and skips.
Messages keep the scaffold they were made in (text-format tool calls stay text, function calls
stay calls), so a row teaches that scaffold; `harness` says which it was. Each trajectory lists
the tool schemas its model was shown, from the file or the harness (tools.py), so that every
call it makes names a listed tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from factory.errors import UsageError
from factory.interchange import atif
from factory.interchange import tools as harness_tools
from factory.interchange.content import text_of
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
    passed_over: tuple[str, ...] = ()
    """Names the patterns match that it leaves out of a folder: other files that sit beside its
    own, such as a Harbor trial's bookkeeping beside its `agent/trajectory.json`."""


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BadTrajectoryFile(path, "file", f"cannot be read ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise BadTrajectoryFile(path, "file", f"not JSON (line {exc.lineno}: {exc.msg})") from exc


def _text(content: Any, path: Path, where: str) -> str:
    """A message's content: a string, or a list of parts (content.py)."""
    text = text_of(content)
    if text is None:
        raise BadTrajectoryFile(path, where, f"content must be text or a list of parts, not {type(content).__name__}")
    return text


DIFF = re.compile(r"^(diff --git |--- \S.*\n\+\+\+ )", re.MULTILINE)


def _patch(submission: Any) -> str:
    """A submission that is a diff. Not every one is: mini-swe-agent and SWE-agent put the error's
    text there when a run crashed, and an agent may submit prose."""
    return submission if isinstance(submission, str) and DIFF.search(submission) else ""


def _harbor_result(path: Path) -> dict[str, Any]:
    """The `result.json` of the Harbor trial a file is in (`TRIAL/agent/FILE`), or {}: it names the
    task (`task_name`) and holds the verifier's reward."""
    result = path.parent.parent / "result.json"
    if path.parent.name != "agent" or not result.is_file():
        return {}
    try:
        data = json.loads(result.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _instance_of(path: Path) -> str:
    """A file's instance id where the file holds none: its Harbor trial's task, else its name."""
    task = _harbor_result(path).get("task_name")
    return str(task) if task else _instance_from_name(path)


def _source_failed(path: Path) -> str | None:
    """Why the Harbor trial a file is in was not solved by its source's verifier, or None."""
    rewards = (_harbor_result(path).get("verifier_result") or {}).get("rewards") or {}
    reward = rewards.get("reward") if isinstance(rewards, dict) else None
    if isinstance(reward, int | float) and reward <= 0:
        return f"not verified: its source's verifier gave reward {reward} ({path.parent.parent / 'result.json'})"
    return None


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


def _failed_by_source(trajectory: Trajectory, why: str | None) -> Trajectory:
    """A trajectory without a patch that its source says did not solve its task is recorded
    unverified with that reason (a patch is for factory's verifier to judge, whatever the source says)."""
    if why and not trajectory.patch.strip():
        trajectory.error = why
    return trajectory


def read_mini_swe_agent(path: Path) -> list[Trajectory]:
    data = _json(path)
    if isinstance(data, list):  # the older format: the message list alone
        messages = chat_messages(data, path, "(the message list)")
        said = "".join(m.content for m in messages[-3:])
        exit = Exit.submitted if any(s in said for s in SUBMIT_SENTINELS) else Exit.max_turns
        return [Trajectory(instance_id=_instance_of(path), teacher="mini-swe-agent", model="unknown",
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
    instance = data.get("instance_id") or info.get("instance_id") or _instance_of(path)
    model = _model_of(info)
    status = info.get("exit_status")  # none: saved before the run ended, as when its harness killed it
    raw = data["messages"]
    messages = chat_messages([_chat_layout(m) for m in raw] if isinstance(raw, list) else raw, path)
    return [_failed_by_source(Trajectory(
        instance_id=str(instance), teacher=model, model=model, messages=messages,
        tools=_mini_swe_agent_tools(data, messages), patch=_patch(submission),
        exit=_exit(status) if status else Exit.timeout, turns=_cost(info.get("model_stats")), harness="mini-swe-agent"),
        _source_failed(path))]


def read_swe_agent(path: Path) -> list[Trajectory]:
    data = _json(path)
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        raise BadTrajectoryFile(path, "history", "missing: expected a SWE-agent .traj file {history, info, ...}")
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    replay = data.get("replay_config")  # 1.x: the run's config, as an object or as JSON text; 0.x: none
    try:
        replay = json.loads(replay) if isinstance(replay, str) else replay
    except json.JSONDecodeError:
        replay = None
    replay = replay if isinstance(replay, dict) else {}
    model = str(((replay.get("agent") or {}).get("model") or {}).get("name") or "unknown")
    problem = replay.get("problem_statement") if isinstance(replay.get("problem_statement"), dict) else {}
    instance = problem.get("id") or _instance_of(path)
    messages = chat_messages(data["history"], path, "history")
    tools = harness_tools.complete(messages, harness_tools.swe_agent_tools(info.get("swe_agent_version"), replay))
    statement = problem.get("text")
    return [Trajectory(instance_id=str(instance), teacher=model, model=model,
                       messages=messages, tools=tools, patch=_patch(info.get("submission")),
                       exit=_exit(info.get("exit_status")), turns=_cost(info.get("model_stats")), harness="swe-agent",
                       problem_statement=statement if isinstance(statement, str) else None)]


def _lines(path: Path) -> list[tuple[str, Any]]:
    """(`line N`, value) for each non-empty line of a JSON-lines file."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadTrajectoryFile(path, "file", f"cannot be read ({exc})") from exc
    values = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            values.append((f"line {n}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise BadTrajectoryFile(path, f"line {n}", f"not JSON ({exc.msg})") from exc
    return values


def _jsonl(path: Path, ids: tuple[str, ...] = ("instance_id",)) -> list[tuple[str, str, dict[str, Any]]]:
    """(`line N`, id, row) for each non-empty line, every row a JSON object with an id: the first
    of the `ids` keys it has."""
    rows = []
    for where, row in _lines(path):
        found = next((row[k] for k in ids if isinstance(row, dict) and isinstance(row.get(k), str | int)), None)
        if found is None:
            raise BadTrajectoryFile(path, f"{where}: {ids[0]}", f"missing: each line is one run with its {' or '.join(ids)}")
        rows.append((where, str(found), row))
    return rows


def read_swe_smith_sft(path: Path) -> list[Trajectory]:
    """SWE-smith's `transform_to_ft` rows (xml or ticks style, calls in the text) and its released
    dataset's rows, whose `messages` may be JSON text, with `tool_calls` where the model called
    tools, and which may say `model`, `patch` and `resolved`."""
    out = []
    for where, instance, row in _jsonl(path):
        raw = row.get("messages")
        try:
            raw = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError as exc:
            raise BadTrajectoryFile(path, f"{where}: messages", f"text that is not JSON ({exc.msg})") from exc
        messages = chat_messages(raw, path, f"{where}: messages")
        known = [t for t in _listed(row.get("tools")) if isinstance(t, dict)]
        model = str(row.get("model") or "unknown")
        said_no = "not verified: its source says it did not resolve its task (resolved: false)"
        out.append(_failed_by_source(Trajectory(
            instance_id=instance, teacher=model if model != "unknown" else "swe-smith", model=model, messages=messages,
            tools=harness_tools.complete(messages, known), patch=_patch(row.get("patch")), exit=Exit.submitted,
            harness="swe-smith-sft"), said_no if row.get("resolved") is False else None))
    return out


def _listed(value: Any) -> list[Any]:
    """A list field that a dataset may have stored as JSON text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return []
    return value if isinstance(value, list) else []


CODEACT_TAGS = {"run": ("execute_bash", "command"), "run_ipython": ("execute_ipython", "code"),
                "browse_interactive": ("execute_browse", "browser_actions")}
"""How CodeAct's text-format versions (before function calling) had the model write an action."""


def _events(history: Any, path: Path, where: str) -> list[dict[str, Any]]:
    """OpenHands' history as one list of events: newer versions write the events, older ones
    (2024) `[action, observation]` pairs."""
    if not isinstance(history, list) or not history:
        raise BadTrajectoryFile(path, f"{where}: history", "must be a non-empty list of events")
    events = []
    for i, item in enumerate(history):
        pair = item if isinstance(item, list) else [item]
        if not all(isinstance(e, dict) for e in pair):
            raise BadTrajectoryFile(path, f"{where}: history[{i}]", "must be an event object or an [action, observation] pair")
        events += pair
    return events


def _codeact_text(event: dict[str, Any], args: dict[str, Any]) -> str:
    """A text-format CodeAct action as the model wrote it: its thought, then the action in its tag."""
    thought = str(args.get("thought") or "")
    if event["action"] in CODEACT_TAGS:
        tag, key = CODEACT_TAGS[event["action"]]
        return f"{thought}\n\n<{tag}>\n{args.get(key) or ''}\n</{tag}>".strip()
    return str(args.get("content") or thought or event.get("message") or "")


def _openhands_messages(events: list[dict[str, Any]], path: Path, where: str
                        ) -> tuple[list[Message], list[dict[str, Any]], bool]:
    """The conversation in OpenHands' event stream: the system prompt, the user's messages, the
    model's own responses and the results that answer them, and the tools the system event says
    the model was given. With function calling (`tool_call_metadata`), one message per model
    response however many actions it made, and the tool results that answer its calls; in the
    text-format versions before it, each agent action as CodeAct had the model write it and each
    result as the user message that delivered it. Other events (workspace recalls, state changes,
    empty observations) were never shown to the model as turns."""
    calling = any(e.get("tool_call_metadata") for e in events)
    messages: list[Message] = []
    tools: list[dict[str, Any]] = []
    responses: set[str] = set()
    finished = False
    for i, event in enumerate(events):
        meta = event.get("tool_call_metadata") or {}
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        text = args.get("content") or event.get("message") or ""
        if isinstance(event.get("action"), str):
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
                    calls = _calls(reply.get("tool_calls"), path, f"{where}: history event {i}.model_response")
                    messages.append(Message(role="assistant", content=_text(reply.get("content"), path, where),
                                            tool_calls=calls))
                elif event["action"] == "message" or not calling:
                    messages.append(Message(role="assistant", content=_codeact_text(event, args)))
        elif "observation" in event and meta.get("tool_call_id"):
            messages.append(Message(role="tool", content=str(event.get("content") or ""),
                                    tool_call_id=str(meta["tool_call_id"]), name=meta.get("function_name")))
        elif "observation" in event and not calling and event.get("content") and event["observation"] != "null":
            messages.append(Message(role="user", content=f"OBSERVATION:\n{event['content']}"))
    return messages, tools, finished


SDK_RESULTS = ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation")
"""OpenHands 1.x events that answer a tool call."""


def _sdk_result(event: dict[str, Any]) -> str:
    """The text an answering event gave the model: an observation's content parts (or its older
    `output`), an agent error, a user's rejection."""
    observation = event.get("observation") if isinstance(event.get("observation"), dict) else {}
    if observation.get("content"):
        return text_of(observation["content"]) or ""
    return str(observation.get("output") or event.get("error") or event.get("rejection_reason") or "")


def _sdk_messages(events: list[dict[str, Any]], path: Path, where: str) -> tuple[list[Message], list[dict[str, Any]], bool]:
    """OpenHands 1.x (its agent SDK) keeps typed events (`kind`): the system prompt with the tools,
    messages, one `ActionEvent` per tool call (the calls of one model response share its
    `llm_response_id`, and are one assistant message here), and the events that answer them.
    Other events (state updates, condensation requests) were never shown to the model as turns."""
    messages: list[Message] = []
    tools: list[dict[str, Any]] = []
    responses: dict[str, Message] = {}
    finished = False
    for i, event in enumerate(events):
        kind, at = event.get("kind"), f"{where}: history event {i}"
        if kind == "SystemPromptEvent":
            prompt = event.get("system_prompt")
            messages.append(Message(role="system", content=_text(prompt.get("text") if isinstance(prompt, dict) else prompt,
                                                                 path, at)))
            tools += [t for t in event.get("tools") or [] if isinstance(t, dict)]
        elif kind == "MessageEvent":
            llm = event.get("llm_message") if isinstance(event.get("llm_message"), dict) else {}
            if llm.get("role") in ("system", "user", "assistant"):
                messages.append(Message(role=llm["role"], content=_text(llm.get("content"), path, at)))
        elif kind == "ActionEvent":
            call = event.get("tool_call") if isinstance(event.get("tool_call"), dict) else {}
            [tool_call] = _calls([{"id": call.get("id") or event.get("tool_call_id"), "function": {
                "name": call.get("name") or event.get("tool_name"), "arguments": call.get("arguments", "{}")}}], path, at)
            finished = finished or tool_call.name == "finish"
            response = event.get("llm_response_id")
            if response in responses:
                responses[response].tool_calls.append(tool_call)
                continue
            reasoning = event.get("reasoning_content")
            message = Message(role="assistant", content=_text(event.get("thought"), path, at), tool_calls=[tool_call],
                              reasoning=reasoning if isinstance(reasoning, str) else None)
            messages.append(message)
            if response:
                responses[response] = message
        elif kind in SDK_RESULTS and event.get("tool_call_id"):
            messages.append(Message(role="tool", content=_sdk_result(event), tool_call_id=str(event["tool_call_id"]),
                                    name=event.get("tool_name")))
    return messages, tools, finished


def read_openhands(path: Path) -> list[Trajectory]:
    """Its evaluation output, a run a line. The older lines (2024) keep the patch in `git_patch`,
    the model in `metadata.model_name` and the task in `swe_instance`; benchmarks other than
    SWE-bench name a run by their own id. The 1.x lines (its agent SDK) hold typed events, the model
    in `metadata.llm.model`, and may leave the user's first message out of the history: their
    `instruction` is that message."""
    out = []
    for where, instance, row in _jsonl(path, ("instance_id", "question_id", "task_id", "id")):
        events = _events(row.get("history"), path, where)
        sdk = any("kind" in e for e in events)
        messages, tools, finished = (_sdk_messages if sdk else _openhands_messages)(events, path, where)
        if sdk and not any(m.role == "user" for m in messages) and isinstance(row.get("instruction"), str):
            at = sum(m.role == "system" for m in messages)
            messages.insert(at, Message(role="user", content=row["instruction"]))
        metadata = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        model = str((metadata.get("llm_config") or metadata.get("llm") or {}).get("model")
                    or metadata.get("model_name") or "unknown")
        patch = (row.get("test_result") or {}).get("git_patch") if isinstance(row.get("test_result"), dict) else None
        task = next((t for t in (row.get("instance"), row.get("swe_instance")) if isinstance(t, dict)), {})
        statement = task.get("problem_statement")
        error = str(row.get("error") or "")
        exit = Exit.submitted if finished else Exit.max_turns if "maximum iteration" in error or not error else Exit.crashed
        out.append(Trajectory(instance_id=instance, teacher=model, model=model, messages=messages,
                              tools=harness_tools.complete(messages, tools), patch=_patch(patch or row.get("git_patch")),
                              exit=exit, turns=_cost({"instance_cost": (row.get("metrics") or {}).get("accumulated_cost")}),
                              harness="openhands", problem_statement=statement if isinstance(statement, str) else None))
    return out


def read_atif(path: Path) -> list[Trajectory]:
    """`*.json`: one trajectory, as Harbor writes `trajectory.json`; `*.jsonl`: one a line, as
    `factory export --format atif` writes them."""
    found = [(f"{where}: ", data) for where, data in _lines(path)] if path.suffix == ".jsonl" else [("", _json(path))]
    out = []
    for where, data in found:
        try:
            trajectory = atif.trajectory_of(data, _instance_of(path))
        except atif.AtifError as exc:
            raise BadTrajectoryFile(path, where + exc.where, str(exc).removeprefix(f"{exc.where}: ")) from exc
        extra = data.get("extra") if isinstance(data.get("extra"), dict) else {}
        said_no = extra.get("resolved") is False  # as factory's own export writes it
        out.append(_failed_by_source(trajectory, _source_failed(path) or (
            "not verified: its source says it did not resolve its task (extra.resolved: false)" if said_no else None)))
    return out


READERS: Registry[Reader] = Registry("trajectory format")
"""`factory import --format`: a new format is its `read_*` and one `add`."""
READERS.add("mini-swe-agent", Reader("mini-swe-agent", ("*.traj.json", "*.trajectory.json"), read_mini_swe_agent))
READERS.add("swe-agent", Reader("swe-agent", ("*.traj",), read_swe_agent))
READERS.add("swe-smith-sft", Reader("swe-smith-sft", ("*.jsonl",), read_swe_smith_sft))
READERS.add("openhands", Reader("openhands", ("*.jsonl",), read_openhands))
READERS.add("atif", Reader("atif", ("*.json", "*.jsonl"), read_atif,
                          passed_over=("config.json", "result.json", "reward.json", "mini-swe-agent.trajectory.json")))


def reader_named(name: str) -> Reader:
    """`READERS.get`: an unknown name lists the valid ones."""
    return READERS.get(name)


def files_of(path: Path, reader: Reader) -> list[Path]:
    """The file itself, or the files in a folder (recursively) that the format's names match."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UsageError(f"{path}: no such file or folder")
    found = sorted({f for pattern in reader.patterns for f in path.rglob(pattern) if f.is_file()
                    and not any(fnmatch(f.name, name) for name in reader.passed_over)})
    if not found:
        raise UsageError(f"{path}: no {' or '.join(reader.patterns)} files for --format {reader.name}")
    return found
