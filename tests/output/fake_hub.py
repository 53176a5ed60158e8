"""A local stand-in for the Hub endpoints that `huggingface_hub` uses to push a dataset.

A standard-library HTTP server on 127.0.0.1 (random port), stateful: repos, branches, commits
with their files, and an LFS store. It speaks what `HfApi.create_repo`, `create_branch`,
`list_repo_files`, `repo_info` and `create_commit` call (read from the installed client):

    POST /api/repos/create                                  create a repo (409 when it exists)
    POST /api/validate-yaml                                 README.md metadata check
    POST /api/{type}s/{repo}/preupload/{rev}                regular or LFS, and the remote oid
    POST /{datasets/}{repo}.git/info/lfs/objects/batch      LFS batch: where to PUT each object
    PUT  /lfs/upload/{oid}, POST /lfs/verify/{oid}          LFS object upload and check
    POST /api/{type}s/{repo}/commit/{rev}                   NDJSON commit (header, file, lfsFile, deleted*)
    POST /api/{type}s/{repo}/branch/{branch}                create a branch
    GET  /api/{type}s/{repo}[/revision/{rev}]               repo info
    GET  /api/{type}s/{repo}/tree/{rev}[/{path}]            file listing

The client must be told to use LFS rather than Xet (the `fake_hub` fixture does). Anything
else is answered 404 and recorded in `unhandled`, so a test sees what it did not expect.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
import yaml

TOKEN = "hf_" + "fakeHubTokenForTestsOnly0123456789"
GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"
_REPO = r"(?P<type>models|datasets|spaces)/(?P<repo>[^/]+/[^/]+)"


def git_hash(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


@dataclass
class HubFile:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def oid(self) -> str:
        """What preupload reports: sha256 for LFS files, git sha1 for regular ones (as the client compares)."""
        return self.sha256 if self.lfs else git_hash(self.data)


@dataclass
class Commit:
    oid: str
    parent: str | None
    title: str
    description: str
    files: dict[str, HubFile]
    operations: list[dict[str, Any]] = field(default_factory=list)
    """The NDJSON lines of the commit, header excluded (contents left out)."""


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    branches: dict[str, str] = field(default_factory=dict)
    commits: dict[str, Commit] = field(default_factory=dict)

    def head(self, branch: str = "main") -> Commit:
        return self.commits[self.branches[branch]]

    def history(self, branch: str = "main") -> list[Commit]:
        """Newest first."""
        out, oid = [], self.branches[branch]
        while oid is not None:
            out.append(self.commits[oid])
            oid = self.commits[oid].parent
        return out

    def add_commit(self, branch: str, title: str, description: str, files: dict[str, HubFile],
                   operations: list[dict[str, Any]]) -> Commit:
        parent = self.branches.get(branch)
        digest = hashlib.sha1(f"{self.repo_id}\x00{parent}\x00{title}\x00{len(self.commits)}".encode())
        for path in sorted(files):
            digest.update(path.encode() + files[path].sha256.encode())
        commit = Commit(digest.hexdigest(), parent, title, description, files, operations)
        self.commits[commit.oid] = commit
        self.branches[branch] = commit.oid
        return commit


class HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


@dataclass
class Response:
    status: int
    body: Any
    content_type: str = "application/json"


class FakeHub:
    """State and routes; `start()` serves them until `stop()`."""

    def __init__(self, token: str = TOKEN, max_requests: int = 500):
        self.token = token
        self.max_requests = max_requests
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.requests: list[tuple[str, str]] = []
        self.unhandled: list[tuple[str, str]] = []
        self.create_calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeHub:
        hub = self

        class Handler(_Handler):
            fake = hub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # ------------------------------------------------------------------ helpers for tests

    def repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        return self.repos[(repo_type, repo_id)]

    # ------------------------------------------------------------------ routing

    def handle(self, method: str, url: str, headers: dict[str, str], body: bytes) -> Response:
        parts = urlsplit(url)
        path, query = parts.path, parse_qs(parts.query)
        with self._lock:
            self.requests.append((method, path))
            if len(self.requests) > self.max_requests:
                return Response(503, {"error": "request budget of the fake hub exhausted"})
        try:
            if path.startswith("/lfs/upload/") and method == "PUT":
                return self._lfs_upload(path.rsplit("/", 1)[1], body)
            if headers.get("authorization") != f"Bearer {self.token}":
                raise HubError(401, "Invalid credentials in Authorization header")
            for route_method, pattern, handler in self._routes():
                match = re.fullmatch(pattern, path)
                if match and method == route_method:
                    groups = {k: unquote(v) for k, v in match.groupdict().items() if v is not None}
                    with self._lock:
                        return handler(body=body, query=query, **groups)
            with self._lock:
                self.unhandled.append((method, path))
            raise HubError(404, f"the fake hub does not serve {method} {path}")
        except HubError as exc:
            return Response(exc.status, {"error": exc.message, "_code": exc.code})

    def _routes(self) -> Iterator[tuple[str, str, Any]]:
        yield "POST", r"/api/repos/create", self._create_repo
        yield "POST", r"/api/validate-yaml", self._validate_yaml
        yield "POST", rf"/api/{_REPO}/preupload/(?P<rev>[^/]+)", self._preupload
        yield "POST", rf"/api/{_REPO}/commit/(?P<rev>[^/]+)", self._commit
        yield "POST", rf"/api/{_REPO}/branch/(?P<branch>[^/]+)", self._branch
        yield "GET", rf"/api/{_REPO}/tree/(?P<rev>[^/]+)(?:/(?P<sub>.+))?", self._tree
        yield "GET", rf"/api/{_REPO}(?:/revision/(?P<rev>[^/]+))?", self._info
        yield "POST", r"/(?:(?P<type>datasets|spaces)/)?(?P<repo>[^/]+/[^/]+)\.git/info/lfs/objects/batch", self._lfs_batch
        yield "POST", r"/lfs/verify/(?P<oid>[0-9a-f]{64})", self._lfs_verify

    def _find(self, type: str | None, repo: str) -> Repo:
        key = ((type or "models").rstrip("s"), repo)
        if key not in self.repos:
            raise HubError(404, f"Repository {repo} not found", "RepoNotFound")
        return self.repos[key]

    def _rev(self, repo: Repo, rev: str) -> str:
        if rev not in repo.branches and rev not in repo.commits:
            raise HubError(404, f"Revision {rev} not found", "RevisionNotFound")
        return rev

    def _files_at(self, repo: Repo, rev: str) -> dict[str, HubFile]:
        rev = self._rev(repo, rev)
        return repo.commits[repo.branches.get(rev, rev)].files

    # ------------------------------------------------------------------ endpoints

    def _create_repo(self, body: bytes, **_: Any) -> Response:
        payload = json.loads(body)
        self.create_calls.append(payload)
        repo_type = payload.get("type") or "model"
        repo_id = f"{payload['organization']}/{payload['name']}" if payload.get("organization") else payload["name"]
        url = f"{self.url}/{repo_type + 's/' if repo_type != 'model' else ''}{repo_id}"
        if (repo_type, repo_id) in self.repos:
            return Response(409, {"error": "You already created this repo", "url": url})
        repo = Repo(repo_type, repo_id, private=payload.get("visibility") == "private" or bool(payload.get("private")))
        repo.add_commit("main", "initial commit", "", {".gitattributes": HubFile(GITATTRIBUTES, lfs=False)}, [])
        self.repos[(repo_type, repo_id)] = repo
        return Response(200, {"url": url, "name": repo_id, "id": repo_id})

    def _validate_yaml(self, body: bytes, **_: Any) -> Response:
        content = json.loads(body)["content"]
        match = re.match(r"---\n(.*?)\n---\n", content, re.S)
        try:
            data = yaml.safe_load(match.group(1)) if match else None
        except yaml.YAMLError as exc:
            return Response(400, {"errors": [{"message": str(exc)}], "warnings": []})
        if not isinstance(data, dict):
            return Response(400, {"errors": [{"message": "no YAML metadata block"}], "warnings": []})
        return Response(200, {"errors": [], "warnings": []})

    def _preupload(self, type: str, repo: str, rev: str, body: bytes, **_: Any) -> Response:
        files = self._files_at(self._find(type, repo), rev)
        out = []
        for f in json.loads(body)["files"]:
            lfs = f["path"].endswith(".parquet") or f["size"] > 10 * 1024 * 1024
            existing = files.get(f["path"])
            out.append({
                "path": f["path"],
                "uploadMode": "lfs" if lfs else "regular",
                "shouldIgnore": False,
                "oid": existing.oid if existing is not None else None,
            })
        return Response(200, {"files": out, "commitOid": self._find(type, repo).branches.get(rev)})

    def _lfs_batch(self, repo: str, body: bytes, type: str | None = None, **_: Any) -> Response:
        self._find(type, repo)
        payload = json.loads(body)
        objects = []
        for obj in payload["objects"]:
            entry: dict[str, Any] = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in self.lfs:
                entry["actions"] = {
                    "upload": {"href": f"{self.url}/lfs/upload/{obj['oid']}"},
                    "verify": {"href": f"{self.url}/lfs/verify/{obj['oid']}", "header": {}},
                }
            objects.append(entry)
        return Response(200, {"transfer": "basic", "objects": objects}, "application/vnd.git-lfs+json")

    def _lfs_upload(self, oid: str, body: bytes) -> Response:
        if hashlib.sha256(body).hexdigest() != oid:
            raise HubError(400, "uploaded bytes do not match their oid")
        with self._lock:
            self.lfs[oid] = body
        return Response(200, {})

    def _lfs_verify(self, oid: str, body: bytes, **_: Any) -> Response:
        payload = json.loads(body)
        if oid not in self.lfs or len(self.lfs[oid]) != payload["size"]:
            raise HubError(404, f"LFS object {oid} was not uploaded")
        return Response(200, {})

    def _commit(self, type: str, repo: str, rev: str, body: bytes, query: dict[str, list[str]], **_: Any) -> Response:
        target = self._find(type, repo)
        if query.get("create_pr"):
            raise HubError(400, "the fake hub does not open pull requests")
        if rev not in target.branches:
            raise HubError(404, f"Branch {rev} not found", "RevisionNotFound")
        files = dict(target.head(rev).files)
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        header = lines[0]["value"] if lines and lines[0]["key"] == "header" else {}
        parent = header.get("parentCommit")
        if parent and not target.branches[rev].startswith(parent):
            raise HubError(412, "parent commit is not the head of the branch")
        operations = []
        for line in lines[1:]:
            key, value = line["key"], line["value"]
            if key == "file":
                files[value["path"]] = HubFile(base64.b64decode(value["content"]), lfs=False)
            elif key == "lfsFile":
                data = self.lfs.get(value["oid"])
                if data is None or ("size" in value and len(data) != value["size"]):
                    raise HubError(422, f"LFS object of {value['path']} was never uploaded")
                files[value["path"]] = HubFile(data, lfs=True)
            elif key == "deletedFile":
                if value["path"] not in files:
                    raise HubError(404, f"A file with this name doesn't exist: {value['path']}", "EntryNotFound")
                del files[value["path"]]
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                files = {p: f for p, f in files.items() if not p.startswith(prefix)}
            else:
                raise HubError(400, f"unknown commit operation {key!r}")
            operations.append({"key": key, "path": value["path"]})
        commit = target.add_commit(rev, header.get("summary", ""), header.get("description", ""), files, operations)
        prefix = f"{type}/" if type != "models" else ""
        return Response(200, {"commitUrl": f"{self.url}/{prefix}{repo}/commit/{commit.oid}", "commitOid": commit.oid,
                              "pullRequestUrl": None})

    def _branch(self, type: str, repo: str, branch: str, body: bytes, **_: Any) -> Response:
        target = self._find(type, repo)
        if branch in target.branches:
            raise HubError(409, f"Branch {branch} already exists")
        start = (json.loads(body) if body else {}).get("startingPoint") or "main"
        target.branches[branch] = target.branches.get(start, start)
        return Response(200, {})

    def _tree(self, type: str, repo: str, rev: str, sub: str | None = None, **_: Any) -> Response:
        files = self._files_at(self._find(type, repo), rev)
        prefix = sub.rstrip("/") + "/" if sub else ""
        entries = []
        for path, f in sorted(files.items()):
            if not path.startswith(prefix):
                continue
            entry: dict[str, Any] = {"type": "file", "path": path, "size": len(f.data), "oid": git_hash(f.data)}
            if f.lfs:
                entry["lfs"] = {"oid": f.sha256, "size": len(f.data), "pointerSize": 134}
            entries.append(entry)
        return Response(200, entries)

    def _info(self, type: str, repo: str, rev: str = "main", **_: Any) -> Response:
        target = self._find(type, repo)
        files = self._files_at(target, rev)
        sha = target.branches.get(rev, rev)
        return Response(200, {"id": repo, "sha": sha, "private": target.private,
                              "siblings": [{"rfilename": p} for p in sorted(files)]})


class _Handler(BaseHTTPRequestHandler):
    fake: FakeHub
    protocol_version = "HTTP/1.1"
    timeout = 10

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _serve(self) -> None:
        body = self._body()
        headers = {k.lower(): v for k, v in self.headers.items()}
        response = self.fake.handle(self.command, self.path, headers, body)
        payload = json.dumps(response.body).encode()
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(payload)))
        if isinstance(response.body, dict) and response.body.get("_code"):
            self.send_header("X-Error-Code", response.body["_code"])
        if isinstance(response.body, dict) and response.status >= 400:
            self.send_header("X-Error-Message", str(response.body.get("error", "")))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A running stand-in, with `huggingface_hub` pointed at it and nothing else reachable."""
    from huggingface_hub import constants

    hub = FakeHub().start()
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", hub.token)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    # The client read these at import; the stand-in speaks LFS, not Xet.
    monkeypatch.setattr(constants, "ENDPOINT", hub.url)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    try:
        yield hub
    finally:
        hub.stop()
