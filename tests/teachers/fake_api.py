"""A local stand-in of the Anthropic Messages API and the OpenAI Chat Completions API.

A real HTTP server on 127.0.0.1 (random port, background thread) for tests and key-less
demos: point the unmodified SDKs at it through their base URL, script what it answers, and
read back every request it got.

    with FakeAPI() as api:
        api.anthropic(rate_limited(retry_after=1), anthropic_message("hi"))
        teacher = AnthropicTeacher(AnthropicConfig(model="claude-sonnet-4-5", base_url=api.anthropic_url))
        ...
        api.requests[-1].body["messages"]

Each route answers from its own queue of `Reply`s, in order. Faults: `rate_limited` (429,
with `retry-after` / `retry-after-ms`), `overloaded` (529), `server_error` (500),
`dropped` (the connection closes with no answer), `slow(seconds, reply)`. An empty queue
answers 400 naming the route, so a test that sends more than it scripted fails clearly.

Many conversations at once (a whole run against the stand-in) cannot share one queue:
`respond(path, fn)` answers each request that finds the queue empty with `fn(request)`, so a
test can pick the reply from the conversation itself (which task, which turn).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/v1/chat/completions"
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_ids = itertools.count(1)


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a JSON body, or an error the route renders in its API's shape."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (a slow response)."""
    drop: bool = False
    """Close the connection without any answer."""
    message: str = ""
    """Error message, for status >= 400 without a body."""
    error_type: str = ""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    raw: str
    body: Any
    """The JSON body, or None when it was not JSON."""


# ------------------------------------------------------------------------- answers


def anthropic_message(
    text: str = "",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    thinking: str | None = None,
    signature: str = "c2lnbmF0dXJl",
    stop_reason: str | None = None,
    usage: dict[str, int] | None = None,
    model: str = "claude-fake",
) -> Reply:
    """A Messages API answer; `tool_calls` items are `{"name", "input", "id"?}`."""
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": signature})
    if text:
        content.append({"type": "text", "text": text})
    for call in tool_calls or []:
        content.append(
            {
                "type": "tool_use",
                "id": call.get("id") or f"toolu_{next(_ids):04d}",
                "name": call["name"],
                "input": call.get("input", {}),
            }
        )
    counts = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    body = {
        "id": f"msg_{next(_ids):04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason or ("tool_use" if tool_calls else "end_turn"),
        "stop_sequence": None,
        "usage": {**counts, **(usage or {})},
    }
    return Reply(body=body)


def openai_completion(
    text: str | None = "",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    reasoning: str | None = None,
    reasoning_field: str = "reasoning_content",
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    model: str = "gpt-fake",
    token_ids: list[int] | None = None,
    prompt_token_ids: list[int] | None = None,
    logprobs: list[float] | None = None,
    ids_field: bool = True,
) -> Reply:
    """A Chat Completions answer; `tool_calls` items are `{"name", "arguments", "id"?}`
    where `arguments` is sent as is when a string, else JSON-encoded.

    `token_ids` answers as vLLM does to `logprobs` with `return_tokens_as_token_ids` (logprob
    tokens written `token_id:N`, each with its `logprobs` value) and, unless `ids_field` is off,
    to `return_token_ids` (`choices[0].token_ids`, and `prompt_token_ids` on the answer)."""
    calls = [
        {
            "id": call.get("id", f"call_{next(_ids):04d}"),
            "type": "function",
            "function": {
                "name": call["name"],
                "arguments": a
                if isinstance(a := call.get("arguments", {}), str)
                else json.dumps(a),
            },
        }
        for call in tool_calls or []
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    if reasoning is not None:
        message[reasoning_field] = reasoning
    counts: dict[str, Any] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    body = {
        "id": f"chatcmpl-{next(_ids):04d}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if calls else "stop"),
            }
        ],
        "usage": {**counts, **(usage or {})},
    }
    if token_ids is not None:
        choice = body["choices"][0]
        values = logprobs if logprobs is not None else [-0.25] * len(token_ids)
        choice["logprobs"] = {"content": [
            {"token": f"token_id:{t}", "logprob": lp, "bytes": None, "top_logprobs": []}
            for t, lp in zip(token_ids, values, strict=True)
        ]}
        if ids_field:
            choice["token_ids"] = token_ids
            body["prompt_token_ids"] = prompt_token_ids
    return Reply(body=body)


def error(
    status: int, message: str = "", error_type: str = "", headers: dict[str, str] | None = None
) -> Reply:
    return Reply(
        status=status,
        message=message or f"fake error {status}",
        error_type=error_type,
        headers=headers or {},
    )


def rate_limited(retry_after: float | None = None, retry_after_ms: float | None = None) -> Reply:
    headers = {}
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    if retry_after_ms is not None:
        headers["retry-after-ms"] = f"{retry_after_ms:g}"
    return error(429, "Number of requests has exceeded your rate limit", headers=headers)


def overloaded() -> Reply:
    return error(529, "Overloaded")


def server_error(status: int = 500) -> Reply:
    return error(status, "Internal server error")


def dropped() -> Reply:
    return Reply(drop=True)


def slow(seconds: float, reply: Reply) -> Reply:
    return replace(reply, delay=seconds)


def _error_body(path: str, reply: Reply) -> dict[str, Any]:
    kind = reply.error_type or ERROR_TYPES.get(reply.status, "api_error")
    if path == ANTHROPIC_PATH:
        return {"type": "error", "error": {"type": kind, "message": reply.message}}
    return {"error": {"message": reply.message, "type": kind, "param": None, "code": kind}}


# -------------------------------------------------------------------------- server


class FakeAPI:
    """The stand-in server. Bound to 127.0.0.1 only; keeps at most `max_requests` requests."""

    def __init__(self, *, max_requests: int = 1000, max_body: int = 16 * 2**20):
        self.max_body = max_body
        self.requests: deque[Request] = deque(maxlen=max_requests)
        self.in_flight = 0
        self.peak_in_flight = 0
        """Most requests answered at the same time (to check a client's concurrency limit)."""
        self._queues: dict[str, deque[Reply]] = {ANTHROPIC_PATH: deque(), OPENAI_PATH: deque()}
        self._responders: dict[str, Callable[[Request], Reply]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name="fake-api", daemon=True
        )

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeAPI:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def script(self, path: str, *replies: Reply) -> None:
        with self._lock:
            self._queues.setdefault(path, deque()).extend(replies)

    def anthropic(self, *replies: Reply) -> None:
        self.script(ANTHROPIC_PATH, *replies)

    def openai(self, *replies: Reply) -> None:
        self.script(OPENAI_PATH, *replies)

    def respond(self, path: str, fn: Callable[[Request], Reply]) -> None:
        """Answer requests on `path` that find no scripted reply with `fn(request)`."""
        with self._lock:
            self._responders[path] = fn

    def pending(self, path: str) -> int:
        with self._lock:
            return len(self._queues.get(path, ()))

    def _next(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            queue = self._queues.get(request.path)
            if queue is None:
                return error(404, f"FakeAPI: no route {request.method} {request.path}")
            if queue:
                return queue.popleft()
            responder = self._responders.get(request.path)
        if responder is not None:
            return responder(request)  # outside the lock: answers are made concurrently
        return error(400, f"FakeAPI: no scripted reply left for {request.method} {request.path}")


class _Handler(BaseHTTPRequestHandler):
    server_version = "FakeAPI/1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests read `requests`, not stderr

    def do_POST(self) -> None:
        fake: FakeAPI = self.server.fake  # type: ignore[attr-defined]
        length = int(self.headers.get("content-length") or 0)
        if length > fake.max_body:
            self._send(
                413,
                {"error": {"message": "FakeAPI: body too large", "type": "request_too_large"}},
                {},
            )
            return
        raw = self.rfile.read(length).decode("utf-8", "replace")
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = None
        path = self.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = fake._next(Request(method="POST", path=path, headers=headers, raw=raw, body=body))
        try:
            self._answer(fake, path, reply)
        finally:
            with fake._lock:
                fake.in_flight -= 1

    def _answer(self, fake: FakeAPI, path: str, reply: Reply) -> None:
        if reply.delay and fake._stop.wait(reply.delay):
            return
        if reply.drop:
            self.close_connection = True
            return
        payload = (
            reply.body if reply.body is not None or reply.status < 400 else _error_body(path, reply)
        )
        self._send(reply.status, payload, reply.headers)

    def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timed out) first
