"""What the docker SDK gets from an engine's Docker API, and what a container's life costs there.

The same script against Docker and against rootless Podman's Docker-compatible socket:

    python bench/engine_probe.py                                   # DOCKER_HOST or the default socket
    python bench/engine_probe.py --url unix:///run/user/1001/podman/podman.sock

Each probe makes the call the sandbox makes (factory/sandbox/docker.py, execd.py) and then looks
from inside the container whether the engine did what was asked: an engine may accept a limit and
not apply it (rootless Podman on cgroup v1 drops every limit with only a log line). Prints one line
per probe (`ok`, `differs: ...`, `refused: ...`) and the median time of create+start+exec+remove.
"""

from __future__ import annotations

import argparse
import io
import statistics
import tarfile
import time
import uuid
from collections.abc import Callable

import docker
from docker.errors import APIError

IMAGE = "factory/python:3.11"
MIB = 1024 * 1024


def sh(container, command: str, **kwargs) -> tuple[int, str]:
    code, out = container.exec_run(["sh", "-c", command], **kwargs)
    return code, out.decode(errors="replace").strip()


def memory_limit(container) -> str:
    """The memory cap the kernel applies to the container, from whichever cgroup layout it sees."""
    return sh(container, "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes")[1]


def probes(client: docker.DockerClient, tag: str) -> list[tuple[str, Callable[[], str]]]:
    labels = {"factory": "1", "factory.probe": tag}
    box: dict = {}

    def create() -> str:
        c = client.containers.create(
            IMAGE, ["sleep", "300"], labels=labels, network_mode="none", cap_drop=["ALL"],
            cap_add=["CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETUID", "SETGID"],
            security_opt=["no-new-privileges"], mem_limit="256m", memswap_limit="256m", pids_limit=64,
            nano_cpus=int(0.5e9), environment={"PYTHONDONTWRITEBYTECODE": "1"}, user="root", working_dir="/",
            init=True)
        c.start()
        box["c"] = c
        c.reload()
        host = c.attrs["HostConfig"]
        return (f"ok (asked back: Memory={host.get('Memory')} PidsLimit={host.get('PidsLimit')} "
                f"NanoCpus={host.get('NanoCpus')} Init={host.get('Init')})")

    def network() -> str:
        nets = sh(box["c"], "ls /sys/class/net")[1].split()
        return "ok (only lo)" if nets == ["lo"] else f"differs: interfaces {nets}"

    def caps() -> str:
        eff = sh(box["c"], "grep CapEff /proc/self/status")[1].split()[-1]
        # CHOWN, DAC_OVERRIDE, FOWNER, KILL, SETGID, SETUID: bits 0, 1, 3, 5, 6, 7
        return f"ok (root's CapEff={eff})" if int(eff, 16) == 0xeb else f"differs: root's CapEff={eff}, asked 0xeb"

    def memory() -> str:
        got = memory_limit(box["c"])
        return "ok (256 MiB)" if got == str(256 * MIB) else f"refused: the container's memory cap is {got}, asked 256 MiB"

    def pids() -> str:
        # 100 sleepers against a limit of 64: the engine's pids cgroup must stop the fork
        code, out = sh(box["c"], "for i in $(seq 100); do sleep 5 </dev/null >/dev/null 2>&1 & done; "
                              "set -- /proc/[0-9]*; echo $#")  # a glob: counting must not fork
        if "Cannot fork" in out:  # dash gives up at the first fork the limit refuses
            return "ok (a fork refused below 100 processes)"
        return f"refused: {out.split()[-1]} processes ran, limit 64"

    def cpus() -> str:
        got = sh(box["c"], "cat /sys/fs/cgroup/cpu.max 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us")[1]
        return f"ok ({got})" if got.startswith("50000") else f"refused: the CPU quota is {got}, asked 0.5 CPU"

    def exec_user() -> str:
        out = sh(box["c"], "id -u", user="1000")[1]
        return "ok" if out == "1000" else f"differs: {out}"

    def demux() -> str:
        code, (out, err) = box["c"].exec_run(["sh", "-c", "echo out; echo err >&2; exit 3"], demux=True)
        return "ok" if (code, out, err) == (3, b"out\n", b"err\n") else f"differs: {code} {out!r} {err!r}"

    def attached_stdin() -> str:
        # how the command server (execd) is fed: an exec's stdin held open over the API's socket
        api = client.api
        made = api.exec_create(box["c"].id, ["sh", "-c", "read line; echo got $line"], stdin=True)
        sock = api.exec_start(made["Id"], socket=True)
        raw = getattr(sock, "_sock", sock)
        raw.sendall(b"ping\n")
        raw.settimeout(10)
        data = b""
        while b"got ping" not in data:
            chunk = raw.recv(4096)
            if not chunk:
                break
            data += chunk
        raw.close()
        return "ok" if b"got ping" in data else f"differs: read {data!r}"

    def archives() -> str:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo("probe/hello.txt")
            info.size = 6
            tar.addfile(info, io.BytesIO(b"hello\n"))
        box["c"].put_archive("/tmp", buf.getvalue())
        chunks, stat = box["c"].get_archive("/tmp/probe/hello.txt")
        with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as tar:
            text = tar.extractfile("hello.txt").read()
        return "ok" if text == b"hello\n" else f"differs: {text!r}"

    def commit() -> str:
        try:
            image = box["c"].commit(repository="factory-probe", tag=tag, changes=["LABEL factory.probe=" + tag])
        except APIError as exc:
            # pausing needs the freezer cgroup, which rootless cgroup v1 has not
            image = box["c"].commit(repository="factory-probe", tag=tag, changes=["LABEL factory.probe=" + tag],
                                    pause=False)
            client.images.remove(image.id, force=True)
            return f"differs: only with pause=False ({str(exc.explanation)[:120]})"
        client.images.remove(image.id, force=True)
        return "ok"

    def listing() -> str:
        found = client.containers.list(all=True, filters={"label": f"factory.probe={tag}"})
        return "ok" if [c.id for c in found] == [box["c"].id] else f"differs: {[c.short_id for c in found]}"

    def kill_events() -> str:
        since = int(time.time()) - 1
        box["c"].kill()
        box["c"].wait(timeout=30)
        events = client.api.events(since=since, until=int(time.time()) + 1, decode=True,
                                   filters={"container": box["c"].id})
        seen = [e.get("status") or e.get("Action") for e in events]
        box["c"].remove(force=True)
        return f"ok ({', '.join(seen)})" if "die" in seen else f"differs: events {seen}"

    return [("create+start (labels, no network, caps, limits, init)", create), ("no network", network),
            ("capabilities", caps), ("memory limit", memory), ("pids limit", pids), ("CPU limit", cpus),
            ("exec as user 1000", exec_user), ("exec demux", demux), ("exec with attached stdin", attached_stdin),
            ("put_archive/get_archive", archives), ("commit", commit), ("list by label", listing),
            ("kill, die event, remove", kill_events)]


def cycle_ms(client: docker.DockerClient, tag: str, n: int) -> float:
    """Median ms of create + start + exec(true) + remove(force), the life of a short sandbox."""
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        c = client.containers.create(IMAGE, ["sleep", "60"], labels={"factory": "1", "factory.probe": tag},
                                     network_mode="none", cap_drop=["ALL"], init=True)
        c.start()
        c.exec_run(["true"])
        c.remove(force=True)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="engine socket (default: DOCKER_HOST or the default socket)")
    parser.add_argument("-n", type=int, default=10, help="create+start+exec+remove cycles to time")
    args = parser.parse_args()
    client = docker.DockerClient(base_url=args.url) if args.url else docker.from_env()
    version = client.version()
    print(f"engine: {version.get('Components', [{}])[0].get('Name', '?')} {version['Version']} "
          f"(API {version['ApiVersion']}) at {args.url or 'DOCKER_HOST/default'}")
    tag = uuid.uuid4().hex[:12]
    try:
        for name, probe in probes(client, tag):
            try:
                result = probe()
            except (APIError, OSError, ValueError, KeyError) as exc:
                result = f"refused: {type(exc).__name__}: {str(exc)[:200]}"
            print(f"  {name:55} {result}")
        print(f"  create+start+exec+remove: {cycle_ms(client, tag, args.n):.0f} ms median of {args.n}")
    finally:
        for c in client.containers.list(all=True, filters={"label": f"factory.probe={tag}"}):
            c.remove(force=True)


if __name__ == "__main__":
    main()
