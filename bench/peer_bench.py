"""Side by side with the peer pipeline: mini-swe-agent 2.4.6 samples, a SWE-bench-style grader
verifies; factory samples and verifies. The same tasks, the same local teacher, the same engine.

Both tools work N copies of three SWE-smith-layout tasks (tests/swesmith_layout.py: repo at
/testbed, root only, a conda-like env) with N in flight, against one OpenAI-compatible stand-in
teacher on loopback (a separate process) that answers every turn after a fixed delay with the
same four-turn script: `ls`, a `grep`, `git status`, then the fix (`git apply -R` of the bug).
factory gets it as tool calls (bash, then bash + submit); mini-swe-agent, through litellm with
an `openai/` model and api_base, as one ```mswea_bash_command block per message, its last
command ending with its submit sentinel.

- mini: `mini-extra swebench` (its thread-pool batch runner, `-w N`) on its DockerEnvironment
  (the docker CLI), from its own venv (.venv-bench/, made here when missing); sample only.
  Its start-up command applies and commits the bug, as SWE-smith's instance branches have it.
- grader: mini's predictions, each in a fresh container, one pytest run, one worker per core
  (bench/peer_grader.py). The peer pipeline is mini then the grader: the headline ratio.
- factory: `factory run`'s code path (run_pipeline) with `max_in_flight` N over the N copies,
  one attempt each: sampling, then every attempt verified by the hidden tests. An attempt
  lost, or not resolved (on either side), is an error.

Each run's CPU is accounted by place (`Account`): the tool's own process and the docker CLI
processes it spawned (getrusage), dockerd + containerd (whole: the engine is shared, so others'
work adds to both sides) and the shims of the bench's containers (their own CPU), read from
/proc/<pid>/stat by a sampler process every 0.1 s, and each of the bench's containers by its
cgroup, as sampling or verification by its attempt label. Exit 1 when a run loses attempts or
errors; the ratios are only a measurement. Under factory's row: its requests to the engine per
verified attempt, by route (`EngineCalls`). `--factory-only --repeat K` runs factory's side alone,
K times per size: the A/B of a change, run against a checkout of each side.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).parent.parent
MINI_VERSION = "2.4.6"
MINI_VENV = ROOT / ".venv-bench"
TASKS = 3
TURNS = 4
SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
RUN_PREFIX = "peer-bench-"  # run ids of the bench's containers: factory's and, by label, mini's
LABEL_RUN = "factory.run"  # factory.sandbox.docker.engine.LABEL_RUN, not imported by the sampler
LABEL_ATTEMPT = "factory.attempt"  # factory.sandbox.docker.engine.LABEL_ATTEMPT
VERIFYING = "verify-"  # attempt label of factory's verification containers (verifier.py), given the grader's too
ENGINE = ("dockerd", "containerd", "containerd-shim")  # comm is cut at 15 chars: containerd-shim-runc-v2


# ---- the stand-in teacher: one script, two action formats

def script(bug_patch: str) -> list[str]:
    """The four commands of an attempt; the last one solves the task."""
    path = re.search(r"^diff --git a/(\S+)", bug_patch, re.M).group(1)
    # the fix, and a comment no other attempt writes: every patch differs, as real attempts' do,
    # so that each is verified on its own (identical patches share one verification)
    fix = (f"echo {base64.b64encode(bug_patch.encode()).decode()} | base64 -d | git apply -R"
           f" && echo \"# attempt $(cat /proc/sys/kernel/random/uuid)\" >> {path}")
    return ["ls", f"grep -n 'def ' {path} | head -20", "git status --short | head -5", fix]


def answer(request: dict, patches: dict[str, str]) -> dict:
    """A chat completion for `request`: tool calls when it offers tools (factory), else text (mini)."""
    text = "\n".join(m["content"] for m in request["messages"] if isinstance(m.get("content"), str))
    bug = next((p for statement, p in patches.items() if statement in text), None)
    if bug is None:
        raise ValueError("no known problem statement in the messages")
    turn = sum(1 for m in request["messages"] if m["role"] == "assistant")
    command = script(bug)[min(turn, TURNS - 1)]
    last = turn >= TURNS - 1
    if request.get("tools"):
        calls = [("bash", {"command": command})] + ([("submit", {})] if last else [])
        message = {"role": "assistant", "content": f"Step {turn + 1}.", "tool_calls": [
            {"id": f"call_{turn}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(calls)]}
        finish = "tool_calls"
    else:
        if last:
            command += f" && echo {SUBMIT} && git diff"
        message = {"role": "assistant", "content": f"THOUGHT: step {turn + 1}.\n\n```mswea_bash_command\n{command}\n```"}
        finish = "stop"
    return {"id": f"chatcmpl-{turn}", "object": "chat.completion", "created": int(time.time()),
            "model": request.get("model", "stand-in"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": len(text) // 4, "completion_tokens": 20, "total_tokens": len(text) // 4 + 20}}


def serve(patches_file: Path, port_file: Path, delay: float) -> None:
    """Serve chat completions on a free loopback port (written to `port_file`) until killed."""
    patches = json.loads(patches_file.read_text())

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as both clients expect

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(delay)
            try:
                status, body = 200, answer(request, patches)
            except (ValueError, KeyError) as exc:
                status, body = 400, {"error": {"message": str(exc), "type": "invalid_request_error"}}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    ThreadingHTTPServer.request_queue_size = 1024  # 256 clients connect at once
    ThreadingHTTPServer.daemon_threads = True
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port_file.write_text(str(server.server_address[1]))
    server.serve_forever()


# ---- engine CPU: a sampler process over /proc

def _stat(pid: str) -> tuple[str, str, int, int] | None:
    """(comm, start time, own ticks, reaped children's ticks) of a process, or None once gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    comm = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat.rpartition(")")[2].split()
    return comm, fields[19], int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def _labels(cid: str) -> dict[str, str] | None:
    """A container's labels, read from the engine's files, not its API (which would cost it CPU); None while not on disk."""
    try:
        return json.loads(Path(f"/var/lib/docker/containers/{cid}/config.v2.json").read_text())["Config"]["Labels"] or {}
    except (OSError, ValueError, KeyError):
        return None


def _ours(pid: str, prefix: str) -> bool | None:
    """Whether a shim serves a container of this bench (its run label starts with `prefix`);
    None while that cannot be read yet."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        labels = _labels(argv[argv.index(b"-id") + 1].decode())
    except (OSError, ValueError, IndexError):
        return None
    return None if labels is None else labels.get(LABEL_RUN, "").startswith(prefix)


def role(labels: dict[str, str]) -> str:
    """What a container of the bench did: "verify" (factory's verifier, the peer's grader) or "sample"."""
    return "verify" if labels.get(LABEL_ATTEMPT, "").startswith(VERIFYING) else "sample"


def _cgroups() -> dict[str, Path]:
    """Container id -> its CPU accounting file (ns), cgroup v1 (cgroupfs) or v2 (either driver)."""
    found = {}
    for pattern in ("cpuacct/docker/*/cpuacct.usage", "docker/*/cpu.stat", "system.slice/docker-*.scope/cpu.stat"):
        for path in Path("/sys/fs/cgroup").glob(pattern):
            found[path.parent.name.removeprefix("docker-").removesuffix(".scope")] = path
    return found


def _cgroup_ns(path: Path) -> int | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    if path.name == "cpuacct.usage":
        return int(text)
    return 1000 * int(next(line.split()[1] for line in text.splitlines() if line.startswith("usage_usec")))


def meter(out: Path, interval: float, prefix: str) -> None:
    """Until SIGTERM: the engine's CPU seconds since start, daemons and shims apart, and the CPU
    of this bench's containers by their cgroups, by role, to `out`.

    The engine is shared: dockerd and containerd count whole, shims and containers only this bench's.
    A shim counts its own CPU only: its reaped children are its container's processes, counted by
    the container's cgroup, and runc (outside it, not counted: alike for both tools, one per exec).
    """
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    seen: dict[str, bool] = {}  # pid -> counted
    first: dict[tuple[str, str, str], int] = {}  # (pid, start time, comm) -> own + reaped children's ticks
    last: dict[tuple[str, str, str], int] = {}
    roles: dict[str, str | None] = {}  # container id -> role, None: not this bench's
    used: dict[str, int] = {}  # container id -> CPU ns, as last read
    begin = True
    while True:
        final = stop.is_set()
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
        for pid in set(seen) - set(pids):
            del seen[pid]
        for pid in pids:
            if pid in seen and not seen[pid]:
                continue
            if (stat := _stat(pid)) is None:
                continue
            comm, start, own, children = stat
            counted = comm in ENGINE and (comm != "containerd-shim" or _ours(pid, prefix))
            if counted is None:
                continue  # a shim whose container is not on disk yet: ask again next time
            seen[pid] = counted
            if counted:
                key = (pid, start, comm)
                # a shim's reaped children are runc and its container's processes: those are in the
                # container's cgroup, and a shim's last ticks are lost when it exits with them
                spent = own if comm == "containerd-shim" else own + children
                first.setdefault(key, spent if begin else 0)
                last[key] = spent
        for cid, path in _cgroups().items():
            if cid not in roles:
                labels = _labels(cid)
                if labels is None:
                    continue
                roles[cid] = role(labels) if labels.get(LABEL_RUN, "").startswith(prefix) and not begin else None
            if roles[cid] is not None and (ns := _cgroup_ns(path)) is not None:
                used[cid] = ns
        begin = False
        if final:
            break
        stop.wait(interval)
    tick = os.sysconf("SC_CLK_TCK")
    shims = sum(last[k] - first[k] for k in last if k[2] == "containerd-shim") / tick
    daemons = sum(last[k] - first[k] for k in last if k[2] != "containerd-shim") / tick
    containers = {r: sum(ns for cid, ns in used.items() if roles[cid] == r) / 1e9 for r in ("sample", "verify")}
    out.write_text(json.dumps({"daemons": daemons, "shims": shims, "containers": containers}))


class EngineMeter:
    """The sampler process around one run: `with EngineMeter() as m: ...; m.daemons, m.shims, m.containers`."""

    def __enter__(self) -> EngineMeter:
        self._out = Path(tempfile.mkstemp(suffix=".json")[1])
        self._proc = subprocess.Popen([sys.executable, __file__, "--meter", str(self._out), RUN_PREFIX])
        time.sleep(0.5)  # its first scan is the baseline
        return self

    def __exit__(self, *exc: object) -> None:
        self._proc.terminate()
        self._proc.wait()
        result = json.loads(self._out.read_text())
        self._out.unlink()
        self.daemons, self.shims, self.containers = result["daemons"], result["shims"], result["containers"]


def own_cpu() -> tuple[float, float]:
    """CPU seconds of this process (all its threads) and of its reaped children, so far."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime


# ---- engine round trips: what factory asks of the engine per attempt

class EngineCalls:
    """Counts factory's requests to the engine's API, by method and route (ids masked), while
    in use: `with EngineCalls() as calls: ...; calls.counts`. Every docker-py call, high-level or
    low, ends in one of APIClient's four verbs, so wrapping those sees them all."""

    VERBS = ("_get", "_post", "_put", "_delete")
    ID = re.compile(r"/[0-9a-f]{12,64}(?=/|$)")
    VERSION = re.compile(r"^.*?/v[0-9.]+(?=/)")

    def __enter__(self) -> EngineCalls:
        from docker.api.client import APIClient

        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._saved = {verb: getattr(APIClient, verb) for verb in self.VERBS}
        for verb, original in self._saved.items():
            setattr(APIClient, verb, self._counting(verb[1:].upper(), original))
        return self

    def _counting(self, method: str, original):  # noqa: ANN001, ANN202 - a wrapper of docker-py's own
        def counted(api, url, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            path = self.VERSION.sub("", url.partition("?")[0])  # http+docker://localhost/v1.47/containers/<id>/json
            route = f"{method} {self.ID.sub('/<id>', path)}"
            with self._lock:
                self.counts[route] = self.counts.get(route, 0) + 1
            return original(api, url, *args, **kwargs)
        return counted

    def __exit__(self, *exc: object) -> None:
        from docker.api.client import APIClient

        for verb, original in self._saved.items():
            setattr(APIClient, verb, original)


# ---- the two tools

@dataclass
class Account:
    """CPU seconds of one run, by where they were spent."""

    process: float  # the tool's own process (factory: until its last verdict; mini: its runner; the grader: its threads)
    cli: float  # docker CLI processes (mini's and the grader's; factory speaks the engine's API from its process)
    daemons: float  # dockerd + containerd (whole: the engine is shared)
    shims: float  # the containers' shims, their own CPU (runc, their reaped child outside the cgroup, is not counted)
    sample: float  # the cgroups of the sampling containers: start state, the agent's commands, the diff
    verify: float  # the cgroups of the verification (grading) containers: start state, apply, the test run

    FIELDS = ("process", "cli", "daemons", "shims", "sample", "verify")

    @classmethod
    def of(cls, process: float, cli: float, meter: EngineMeter) -> Account:
        return cls(process, cli, meter.daemons, meter.shims, meter.containers["sample"],
                   meter.containers["verify"])

    @property
    def total(self) -> float:
        return sum(getattr(self, f) for f in self.FIELDS)

    def __add__(self, other: Account) -> Account:
        return Account(*(getattr(self, f) + getattr(other, f) for f in self.FIELDS))


@dataclass
class Result:
    wall: float  # the whole run (factory's: its dataset, card and plots built too)
    sampled: float  # until the last attempt's sampling ended (mini: its whole run)
    verified: float  # until the last attempt's verdict (mini: never; the grader: its whole run)
    attempts: int  # sampled with a patch (mini), resolved (factory, the grader)
    calls: int
    cpu: Account
    problems: list[str]
    requests: dict[str, int] | None = None  # factory's engine API requests by route (`EngineCalls`)


def copies(rows: list[dict], n: int) -> list[dict]:
    """N SWE-smith rows: copy k of task k mod 3, under its own instance id."""
    return [{**rows[k % len(rows)], "instance_id": f"{rows[k % len(rows)]['instance_id']}.copy{k:03d}"}
            for k in range(n)]


def ensure_mini() -> Path:
    """The bench venv's python, with mini-swe-agent installed from PyPI when missing."""
    python = MINI_VENV / "bin/python"
    probe = [str(python), "-c", "import importlib.metadata as m; print(m.version('mini-swe-agent'))"]
    if python.exists() and subprocess.run(probe, capture_output=True, text=True).stdout.strip() == MINI_VERSION:
        return python
    subprocess.run([sys.executable, "-m", "venv", str(MINI_VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    f"mini-swe-agent=={MINI_VERSION}"], check=True)
    return python


# Runs in the bench venv: mini's own batch runner, then every process it left (its background
# `docker stop`s, reparented here as to a subreaper) reaped, then their CPU: the docker CLI's.
MINI_DRIVER = r"""
import ctypes, gc, json, os, resource, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
from minisweagent.run.benchmarks.swebench import app
import datasets, litellm  # imported before the clock starts, as factory's SDKs are
started = time.perf_counter()
try:
    app(sys.argv[2:], standalone_mode=False)
finally:
    wall = time.perf_counter() - started
    gc.collect()  # environments left unreferenced stop their containers from __del__
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    cli = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    with open(sys.argv[1], "w") as f:
        json.dump({"wall": wall, "cli": cli.ru_utime + cli.ru_stime, "self": me.ru_utime + me.ru_stime}, f)
"""


def run_mini(python: Path, rows: list[dict], port: int, work: Path, run_id: str) -> Result:
    from factory.sandbox.docker import engine

    n = len(rows)
    data = work / "data"
    data.mkdir(parents=True)
    with (data / "test.jsonl").open("w") as f:
        for row in rows:
            f.write(json.dumps({**row, "bug_b64": base64.b64encode(row["patch"].encode()).decode()}) + "\n")
    labels = [arg for key, value in engine.labels(run_id, "mini").items() for arg in ("--label", f"{key}={value}")]
    config = {
        "model": {"model_name": "openai/stand-in", "model_class": "litellm_textbased", "cost_tracking": "ignore_errors",
                  "model_kwargs": {"api_base": f"http://127.0.0.1:{port}/v1", "api_key": "EMPTY", "drop_params": True}},
        "environment": {"environment_class": "docker", "run_args": ["--rm", "--network", "none", *labels]},
        "run": {"env_startup_command": "echo {{bug_b64}} | base64 -d | git apply"
                                       " && git -c user.name=b -c user.email=b@b commit -qam bug"},
        "agent": {"step_limit": 2 * TURNS},
    }
    (work / "peer.yaml").write_text(json.dumps(config))
    env = {**os.environ, "MSWEA_SILENT_STARTUP": "1", "MSWEA_GLOBAL_CONFIG_DIR": str(work / "cfg"),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HOME": str(work / "hf"), "HF_DATASETS_OFFLINE": "1",
           "HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": "EMPTY"}
    out = work / "out"
    stats = work / "driver.json"
    command = [str(python), "-c", MINI_DRIVER, str(stats), "--subset", str(data), "--split", "test",
               "-w", str(n), "-o", str(out), "-c", "swebench_backticks.yaml", "-c", str(work / "peer.yaml")]
    with EngineMeter() as meter, (work / "mini.log").open("w") as log:
        code = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    tail = " | ".join((work / "mini.log").read_text(errors="replace").splitlines()[-3:])
    problems = [] if code == 0 else [f"mini's runner exited {code}: {tail}"]
    nan = float("nan")
    driver = json.loads(stats.read_text()) if stats.exists() else {"wall": nan, "cli": nan, "self": nan}
    preds = json.loads((out / "preds.json").read_text()) if (out / "preds.json").exists() else {}
    calls, submitted = 0, 0
    for row in rows:
        traj = out / row["instance_id"] / f"{row['instance_id']}.traj.json"
        if not traj.exists():
            continue
        info = json.loads(traj.read_text())
        calls += sum(len(m.get("extra", {}).get("actions", [])) for m in info["messages"] if m["role"] == "assistant")
        patch = preds.get(row["instance_id"], {}).get("model_patch") or ""
        if info["info"]["exit_status"] == "Submitted" and patch.startswith("diff --git"):
            submitted += 1
    if submitted < n:
        problems.append(f"mini: {n - submitted} of {n} attempt(s) did not submit a patch")
    return Result(driver["wall"], driver["wall"], nan, submitted, calls, Account.of(driver["self"], driver["cli"], meter), problems)


def predictions(work: Path) -> dict[str, str]:
    """mini's patches by instance id, from its preds.json."""
    preds = work / "out/preds.json"
    return {k: v.get("model_patch") or "" for k, v in json.loads(preds.read_text()).items()} if preds.exists() else {}


def run_grader(rows: list[dict], preds: dict[str, str], image: str, run_id: str) -> Result:
    """mini's predictions graded the SWE-bench way (bench/peer_grader.py), one worker per core."""
    from peer_grader import grade_all

    from factory.sandbox.docker import engine

    workers = os.cpu_count() or 1
    with EngineMeter() as meter:
        before, started = own_cpu(), time.monotonic()
        graded = grade_all(rows, preds, image, lambda iid: engine.labels(run_id, f"{VERIFYING}{iid}"[:60]), workers)
        wall, after = time.monotonic() - started, own_cpu()
    problems = [f"grader: {g.instance_id} not resolved: {g.why}" for g in graded if not g.resolved]
    resolved = sum(g.resolved for g in graded)
    if resolved < len(rows):
        problems.append(f"grader: {len(rows) - resolved} of {len(rows)} attempt(s) not resolved")
    return Result(wall, 0.0, wall, resolved, 0, Account.of(after[0] - before[0], after[1] - before[1], meter), problems)


async def run_factory(rows: list[dict], port: int, work: Path, run_id: str) -> Result:
    import openai  # noqa: F401  imported before the clock starts, as mini's litellm is
    from swesmith_loss_bench import lost_reason

    from factory.config import load_pipeline
    from factory.run.progress import QuietProgress
    from factory.run.runner import run_pipeline
    from factory.sandbox.docker.engine import remove_containers
    from factory.verify.verifier import REUSED
    from tests.swesmith_layout import SWESMITH_KEYS

    n = len(rows)
    taskset = work / "taskset"
    taskset.mkdir(parents=True)
    (taskset / "tasks.jsonl").write_text("".join(json.dumps({k: r.get(k) for k in SWESMITH_KEYS}) + "\n" for r in rows))
    pipeline = work / "pipeline.yaml"
    pipeline.write_text(f"""\
name: peer-bench
tasks: {{source: {taskset}}}
teachers:
  - {{kind: openai, model: stand-in, name: standin, base_url: "http://127.0.0.1:{port}/v1", concurrency: {n},
     price: {{input: 0, output: 0, cache_read: 0, cache_write: 0}}}}
agent: {{max_turns: {2 * TURNS}}}
sandbox: {{max_live: {n}, create_rate: 100}}
sampling: {{attempts_per_task: 1, max_in_flight: {n}}}
filters: {{cap: {{enabled: false}}}}
output: {{dir: {work / "runs"}}}
""")
    class Clocked(QuietProgress):
        """Notes when each attempt's sampling ended (its sandbox start included); `finishes`
        (Progress's own) when each was recorded with its verdict."""

        def __init__(self) -> None:
            super().__init__()
            self.sampled_at: list[float] = []
            self.cpu_at_last = (0.0, 0.0)

        def sampled(self, key: object) -> None:
            super().sampled(key)
            self.sampled_at.append(time.monotonic())

        def finished(self, attempt: object, scheduler: object) -> None:
            super().finished(attempt, scheduler)
            self.cpu_at_last = own_cpu()

    progress = Clocked()
    with EngineMeter() as meter, EngineCalls() as requests:
        started, before = time.monotonic(), own_cpu()
        try:
            outcome = await run_pipeline(load_pipeline(pipeline), run_id=run_id, progress=progress, command="bench")
        finally:
            wall = time.monotonic() - started
            remove_containers(run_id=run_id)
    attempts = outcome.store.attempts()
    problems = [f"factory: {why}" for a in attempts if (why := lost_reason(a))]
    problems += [f"factory: unresolved {a.verdict.reason}: {a.verdict.detail}" for a in attempts
                 if a.verdict and not a.verdict.resolved and not lost_reason(a)]
    if len(attempts) < n:
        problems.append(f"factory: {n - len(attempts)} of {n} attempt(s) never recorded")
    calls = sum(1 for a in attempts if a.trajectory for m in a.trajectory.messages for c in m.tool_calls if c.name == "bash")
    verified = sum(1 for a in attempts if a.verdict and a.verdict.resolved)
    reused = sum(1 for a in attempts if a.verdict and REUSED in a.verdict.flags)
    if reused:  # the teacher's patches all differ: each must have had its own verification
        problems.append(f"factory: {reused} verdict(s) reused, not verified on their own")
    sampled = max(progress.sampled_at, default=float("nan")) - started
    spent = Account.of(progress.cpu_at_last[0] - before[0], progress.cpu_at_last[1] - before[1], meter)
    return Result(wall, sampled, max(progress.finishes, default=float("nan")) - started, verified, calls, spent, problems,
                  requests.counts)


# ---- the bench

def compare(n: int, tools: tuple[str, ...], python: Path, image: str, rows: list[dict], port: int, tmp: Path) -> list[str]:
    """One run of each of `tools` at `n` in flight, their rows printed; their problems."""
    from factory.sandbox.docker.engine import remove_containers

    stamp = int(time.time())
    runs: dict[str, Result] = {}
    for tool in tools:
        run_id = f"{RUN_PREFIX}{tool}-{n}-{stamp}"
        work = tmp / f"{RUN_PREFIX}{'mini' if tool == 'grader' else tool}-{n}-{stamp}"
        try:
            if tool == "mini":
                runs[tool] = run_mini(python, copies(rows, n), port, work, run_id)
            elif tool == "grader":
                runs[tool] = run_grader(copies(rows, n), predictions(work), image, run_id)
            else:
                runs[tool] = asyncio.run(run_factory(copies(rows, n), port, work, run_id))
        finally:
            remove_containers(run_id=run_id)
    if "mini" in runs and "grader" in runs:
        mini, grader = runs["mini"], runs["grader"]
        runs["peer"] = Result(mini.wall + grader.wall, mini.sampled, mini.wall + grader.verified, grader.attempts,
                              mini.calls, mini.cpu + grader.cpu, [])
        runs["factory"] = runs.pop("factory")  # printed last, beside the peer
    peer = runs.get("peer")
    for tool, r in runs.items():
        per = max(runs["grader"].attempts if tool == "mini" else r.attempts, 1)
        account = " ".join(f"{getattr(r.cpu, f) / per:8.3f}" for f in Account.FIELDS)
        ratio = (f" | {r.verified / peer.verified:9.2f} {r.cpu.total / per / (peer.cpu.total / max(peer.attempts, 1)):8.2f}"
                 if tool == "factory" and peer else "")
        print(f"  {n:4d} {tool:>8} {r.wall:7.1f} {r.sampled:8.1f} {r.verified:8.1f} {r.attempts:5d} |"
              f" {'':>27}{account} {r.cpu.total / per:7.3f}{ratio}", flush=True)
        if r.requests:
            print(f"  {'':>13} engine requests per attempt: {sum(r.requests.values()) / per:.2f}: " + ", ".join(
                f"{route} {count / per:.2f}" for route, count in sorted(r.requests.items(), key=lambda i: -i[1])))
    return [p for r in runs.values() for p in r.problems]


def main(sizes: list[int], delay: float, tools: tuple[str, ...] = ("mini", "grader", "factory"), repeat: int = 1) -> int:
    sys.path.insert(0, str(ROOT))  # the image builder lives with the tests
    from tests.swesmith_layout import DEMO, ensure_image

    python = ensure_mini() if "mini" in tools else Path(sys.executable)
    image = ensure_image()
    rows = [{**json.loads(line), "image_name": image} for line in (DEMO / "tasks.jsonl").read_text().splitlines()
            if "semverkit" in line][:TASKS]
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="peer-bench-") as tmp:
        tmp = Path(tmp)
        (tmp / "patches.json").write_text(json.dumps({r["problem_statement"]: r["patch"] for r in rows}))
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(tmp / "patches.json"), str(tmp / "port"),
                                   "--delay", str(delay)])
        try:
            while not (tmp / "port").exists() or not (tmp / "port").read_text():
                time.sleep(0.1)
            port = int((tmp / "port").read_text())
            print(f"peer bench: factory (sample + verify) vs the peer pipeline: mini-swe-agent {MINI_VERSION} (sample)"
                  f" then a SWE-bench-style grader ({os.cpu_count()} workers, one per core); {TASKS} SWE-smith-layout"
                  f" tasks copied N times ({image}); stand-in teacher on loopback, {delay:.0f} s per turn, {TURNS}"
                  f" turns per attempt; {os.cpu_count()} cores")
            print(f"  {'N':>4} {'tool':>8} {'wall s':>7} {'sampled':>8} {'verified':>8} {'done':>5} | CPU s per verified"
                  f" attempt: {' '.join(f'{f:>8}' for f in Account.FIELDS)} {'total':>7} | {'wall/peer':>9} {'cpu/peer':>8}")
            for n in sizes:
                for _ in range(repeat):
                    problems += compare(n, tools, python, image, rows, port, tmp)
        finally:
            server.terminate()
            server.wait()
    if problems:
        print(f"  {len(problems)} problem(s):")
        for why in sorted(set(problems))[:20]:
            print(f"    {sum(p == why for p in problems)}x {why[:300]}")
    return 1 if problems else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,64,256", help="attempts in flight, one setting each")
    parser.add_argument("--delay", type=float, default=2.0, help="seconds the teacher takes per turn")
    parser.add_argument("--factory-only", action="store_true",
                        help="factory's side alone (A/B of a change): its CPU account and engine requests per attempt")
    parser.add_argument("--repeat", type=int, default=1, help="runs at each size, one after the other")
    parser.add_argument("--serve", nargs=2, metavar=("PATCHES", "PORT_FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--meter", nargs=2, metavar=("OUT", "PREFIX"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve[0]), Path(args.serve[1]), args.delay)
    elif args.meter:
        meter(Path(args.meter[0]), 0.1, args.meter[1])
    else:
        tools = ("factory",) if args.factory_only else ("mini", "grader", "factory")
        sys.exit(main([int(x) for x in args.sizes.split(",")], args.delay, tools, args.repeat))
