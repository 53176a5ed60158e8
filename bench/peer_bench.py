"""Side by side with mini-swe-agent 2.4.6: the same tasks, the same local teacher, the same engine.

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
- factory: `factory run`'s code path (run_pipeline) with `max_in_flight` N over the N copies,
  one attempt each: sampling, then every attempt verified by the hidden tests. An attempt
  lost, or not resolved, is an error.

Engine CPU is dockerd + containerd + every containerd-shim, read from /proc/<pid>/stat by a
sampler process every 0.1 s (shims come and go with containers; each counts from 0, with its
reaped children: runc and the commands run inside its container; only shims of the bench's own
containers count, dockerd and containerd count whole, so others' work on a shared engine adds
to both tools' figures). The docker CLI processes
that mini spawns are counted apart (its driver is their subreaper, so none escapes the count).
Exit 1 when a run loses attempts or errors; the ratio is only a measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
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
LABEL_RUN = "factory.run"  # factory.sandbox.engine.LABEL_RUN, not imported by the sampler
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


def _ours(pid: str, prefix: str) -> bool | None:
    """Whether a shim serves a container of this bench (its run label starts with `prefix`);
    None while that cannot be read yet. Read from the engine's files, not its API, which would cost it CPU."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        cid = argv[argv.index(b"-id") + 1].decode()
        labels = json.loads(Path(f"/var/lib/docker/containers/{cid}/config.v2.json").read_text())["Config"]["Labels"]
    except (OSError, ValueError, KeyError, IndexError):
        return None
    return (labels or {}).get(LABEL_RUN, "").startswith(prefix)


def meter(out: Path, interval: float, prefix: str) -> None:
    """Until SIGTERM: the engine's CPU seconds since start, daemons and shims apart, to `out`.

    The engine is shared: dockerd and containerd count whole, shims only for this bench's containers.
    """
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    seen: dict[str, bool] = {}  # pid -> counted
    first: dict[tuple[str, str, str], int] = {}  # (pid, start time, comm) -> own + reaped children's ticks
    last: dict[tuple[str, str, str], int] = {}
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
                first.setdefault(key, own + children if begin else 0)
                last[key] = own + children
        begin = False
        if final:
            break
        stop.wait(interval)
    tick = os.sysconf("SC_CLK_TCK")
    shims = sum(last[k] - first[k] for k in last if k[2] == "containerd-shim") / tick
    daemons = sum(last[k] - first[k] for k in last if k[2] != "containerd-shim") / tick
    out.write_text(json.dumps({"daemons": daemons, "shims": shims}))


class EngineMeter:
    """The sampler process around one run: `with EngineMeter() as m: ...; m.daemons, m.shims`."""

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
        self.daemons, self.shims = result["daemons"], result["shims"]


# ---- the two tools

@dataclass
class Result:
    wall: float  # the whole run (factory's: its dataset, card and plots built too)
    sampled: float  # until the last attempt's sampling ended (mini: its whole run)
    verified: float  # until the last attempt's verdict (mini: its whole run, which verifies none)
    attempts: int
    calls: int
    daemons: float  # dockerd + containerd
    shims: float  # the containers' shims, with runc and what ran inside
    cli: float | None  # docker CLI processes (mini only)
    problems: list[str]


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
    with open(sys.argv[1], "w") as f:
        json.dump({"wall": wall, "cli": cli.ru_utime + cli.ru_stime}, f)
"""


def run_mini(python: Path, rows: list[dict], port: int, work: Path, run_id: str) -> Result:
    from factory.sandbox import engine

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
    driver = json.loads(stats.read_text()) if stats.exists() else {"wall": float("nan"), "cli": float("nan")}
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
    return Result(driver["wall"], driver["wall"], driver["wall"], submitted, calls, meter.daemons, meter.shims, driver["cli"], problems)


async def run_factory(rows: list[dict], port: int, work: Path, run_id: str) -> Result:
    import openai  # noqa: F401  imported before the clock starts, as mini's litellm is
    from swesmith_loss_bench import lost_reason

    from factory.config import load_pipeline
    from factory.progress import QuietProgress
    from factory.run import run_pipeline
    from factory.sandbox import remove_containers
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

        def sampled(self, key: object) -> None:
            super().sampled(key)
            self.sampled_at.append(time.monotonic())

    progress = Clocked()
    with EngineMeter() as meter:
        started = time.monotonic()
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
    return Result(wall, sampled, max(progress.finishes, default=float("nan")) - started, verified, calls, meter.daemons, meter.shims, None, problems)


# ---- the bench

def main(sizes: list[int], delay: float) -> int:
    sys.path.insert(0, str(ROOT))  # the image builder lives with the tests
    from factory.sandbox import remove_containers
    from tests.swesmith_layout import DEMO, ensure_image

    python = ensure_mini()
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
            print(f"peer bench: mini-swe-agent {MINI_VERSION} (sample only) vs factory (sample + verify); {TASKS}"
                  f" SWE-smith-layout tasks copied N times ({image}); stand-in teacher on loopback, {delay:.0f} s per"
                  f" turn, {TURNS} turns per attempt; engine CPU s = daemons (dockerd + containerd) + shims (with runc and"
                  f" what ran inside); {os.cpu_count()} cores")
            print(f"  {'N':>4} {'tool':>8} {'wall s':>7} {'sampled':>8} {'verified':>8} {'done':>5} {'calls':>6} {'daemons s':>9}"
                  f" {'shims s':>8} {'per call':>9} {'per att.':>9} {'CLI s':>7} {'verified/mini':>14} {'wall/mini':>10}")
            for n in sizes:
                stamp = int(time.time())
                runs = {}
                for tool in ("mini", "factory"):
                    run_id = f"{RUN_PREFIX}{tool}-{n}-{stamp}"
                    work = tmp / run_id
                    try:
                        if tool == "mini":
                            runs[tool] = run_mini(python, copies(rows, n), port, work, run_id)
                        else:
                            runs[tool] = asyncio.run(run_factory(copies(rows, n), port, work, run_id))
                    finally:
                        remove_containers(run_id=run_id)
                for tool, r in runs.items():
                    total = r.daemons + r.shims
                    f, m = runs["factory"], runs["mini"]
                    ratio = f"{f.verified / m.wall:14.2f} {f.wall / m.wall:10.2f}" if tool == "factory" else ""
                    cli = f"{r.cli:7.1f}" if r.cli is not None else f"{'-':>7}"
                    print(f"  {n:4d} {tool:>8} {r.wall:7.1f} {r.sampled:8.1f} {r.verified:8.1f} {r.attempts:5d} {r.calls:6d}"
                          f" {r.daemons:9.1f}"
                          f" {r.shims:8.1f} {total / max(r.calls, 1):9.3f} {total / max(r.attempts, 1):9.2f} {cli} {ratio}",
                          flush=True)
                    problems += r.problems
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
    parser.add_argument("--serve", nargs=2, metavar=("PATCHES", "PORT_FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--meter", nargs=2, metavar=("OUT", "PREFIX"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve[0]), Path(args.serve[1]), args.delay)
    elif args.meter:
        meter(Path(args.meter[0]), 0.1, args.meter[1])
    else:
        sys.exit(main([int(x) for x in args.sizes.split(",")], args.delay))
