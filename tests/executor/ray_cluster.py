"""A real Ray cluster on loopback for the tests: a head and worker nodes, each a `ray start
--block` in its own process group (so that a node can be killed whole, and nothing is left
behind), with a private temp dir and ports, and node death noticed within about two seconds."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RAY = str(Path(sys.executable).parent / "ray")
RESOURCE = "factory_sandbox"
FAST_DEATH = {"RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "3",
              "RAY_health_check_initial_delay_ms": "0", "RAY_USAGE_STATS_ENABLED": "0",
              "RAY_AUTH_MODE": "disabled"}  # as the drivers that join it (token files of other clusters aside)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self) -> None:
        self.temp = tempfile.mkdtemp(prefix="rayf-", dir="/tmp")  # short: Ray's socket paths have a limit
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.nodes: list[subprocess.Popen] = []

    def add_node(self, sandboxes: int, *, head: bool = False, extra: dict[str, float] | None = None) -> subprocess.Popen:
        where = ["--head", "--port", str(self.port), "--temp-dir", self.temp, "--include-dashboard=false",
                 "--dashboard-port", str(free_port())] if head else ["--address", self.address]
        ports = ["--node-manager-port", str(free_port()), "--object-manager-port", str(free_port()),
                 "--dashboard-agent-listen-port", str(free_port()), "--dashboard-agent-grpc-port", str(free_port()),
                 "--metrics-export-port", str(free_port()), "--runtime-env-agent-port", str(free_port())]
        resources = json.dumps({RESOURCE: sandboxes, **(extra or {})})
        node = subprocess.Popen([RAY, "start", "--block", *where, *ports, "--num-cpus", "1", "--disable-usage-stats",
                                 "--resources", resources],
                                env={**os.environ, **FAST_DEATH}, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.nodes.append(node)
        self.wait_for(len(self.nodes))
        return node

    def alive(self) -> list[dict]:
        script = (f"import json, ray; ray.init(address={self.address!r}, logging_level='ERROR', log_to_driver=False); "
                  "print(json.dumps([n for n in ray.nodes() if n['Alive']]))")
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        return json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else []

    def wait_for(self, count: int) -> None:
        deadline = time.monotonic() + 120  # a guard against a hang, not a speed assertion
        while len(self.alive()) != count:
            assert time.monotonic() < deadline, f"the Ray cluster never had {count} node(s)"
            assert all(n.poll() is None for n in self.nodes), "a `ray start` ended"
            time.sleep(0.5)

    def kill(self, node: subprocess.Popen) -> None:
        """The node dies at once, raylet and workers, as a machine that loses power."""
        os.killpg(node.pid, signal.SIGKILL)
        node.wait()

    def holds(self, node: subprocess.Popen, pid: int) -> bool:
        """Whether process `pid` (a container's owner: a Ray worker) runs on `node`: the node's
        `ray start` is among its ancestors."""
        while pid > 1:
            if pid == node.pid:
                return True
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                return False
            pid = int(stat.rsplit(")", 1)[1].split()[1])  # field 4, ppid, after the command's name
        return False

    def stop(self) -> None:
        for node in reversed(self.nodes):  # workers first; `ray start --block` stops what it started
            if node.poll() is None:
                node.send_signal(signal.SIGTERM)
        for node in self.nodes:
            try:
                node.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(node.pid, signal.SIGKILL)
                node.wait()
        shutil.rmtree(self.temp, ignore_errors=True)
