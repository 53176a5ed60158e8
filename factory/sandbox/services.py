"""The services an agent left running on a terminal task's machine: what they are, read from /proc
when the agent stops, so that final-state verification can start them again beside the tests
(`factory.verify.final_state`, docs/verify.md "Services").

    snapshot (root shell in the agent's container) ─► a line per process, a line per socket table row
    read_snapshot ─► the agent's process-tree roots (not the sandbox's own: PID 1, its keepalive, the
                     command server and what it runs, the snapshot itself), in start order, each with
                     the TCP/UDP ports its tree listened on

Every backend that can run a shell in its sandbox reads services this way; what it prints is the
agent's machine talking, so it is parsed as untrusted text and bounded.
"""

from __future__ import annotations

import base64
import binascii
import shlex

from pydantic import ConfigDict, Field

from factory.records import Record

MAX_SERVICES = 32
MAX_TEXT = 64 * 1024
"""Bytes of one service's command line or environment kept: a label holds them all."""
NET_TABLES = ["/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp", "/proc/net/udp6"]
LISTEN, BOUND = "0A", "07"
"""Socket states in /proc/net: a listening TCP socket, a bound (unconnected) UDP one."""


def snapshot(own: str) -> str:
    """Root shell that prints the machine's processes and socket tables for `read_snapshot`;
    `own` is shell that prints the pids of the sandbox's own processes (its keepalive, its command server).

    A process's work dir, environment and open files are read as its own user: the sandbox's root
    lacks CAP_SYS_PTRACE, which reading another user's takes."""
    return r"""
one='d=$1; printf "%s %s %s " "$(readlink $d/cwd | base64 -w0)" "$(base64 -w0 < $d/cmdline)" "$(base64 -w0 < $d/environ)"
ls -l $d/fd | grep -o "socket:\[[0-9]*\]" | tr -dc "0-9\n" | tr "\n" " "'
echo "I $$ OWN"
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  read -r stat < $d/stat || continue
  set -- ${stat##*) }
  state=$1 ppid=$2 start=${20}
  [ "$state" = Z ] && continue
  u=; g=
  while read -r k a _; do case $k in Uid:) u=$a ;; Gid:) g=$a ;; esac; done < $d/status
  if [ "$u" = 0 ]; then as=; else as="setpriv --reuid=$u --regid=$g --clear-groups"; fi
  echo "P $p $ppid $start $u $g $($as sh -c "$one" factory-snapshot $d)"
done 2>/dev/null
for t in TABLES; do
  while read -r line; do echo "N $line"; done < $t
done 2>/dev/null
true
""".replace("OWN", own).replace("TABLES", " ".join(NET_TABLES))


class Port(Record):
    model_config = ConfigDict(extra="forbid", frozen=True)

    proto: str
    """`tcp` or `udp` (IPv4 and IPv6 alike)."""
    number: int

    def __str__(self) -> str:
        return f"{self.number}" if self.proto == "tcp" else f"{self.number}/udp"


class Service(Record):
    """One process the agent left running (the root of its process tree), as it was started."""

    argv: list[str]
    cwd: str = "/"
    uid: int = 0
    gid: int = 0
    env: dict[str, str] = Field(default_factory=dict)
    ports: list[Port] = Field(default_factory=list)
    """What its tree listened on when the agent stopped: verification waits for these again."""

    def __str__(self) -> str:
        ports = ", ".join(map(str, self.ports))
        return shlex.join(self.argv)[:200] + (f" (port {ports})" if ports else "")


def listening(tables: str) -> dict[int, Port]:
    """Socket inode -> the port it listens on, from the text of /proc/net/{tcp,tcp6,udp,udp6}
    (each table's header says which protocol its rows are: UDP's has a `drops` column)."""
    found, proto = {}, "tcp"
    for line in tables.splitlines():
        fields = line.split()
        if fields[:1] == ["sl"]:
            proto = "udp" if "drops" in fields else "tcp"
            continue
        if len(fields) < 10 or fields[1].count(":") != 1 or fields[2].count(":") != 1:
            continue  # a row cut short, or not a row
        state, remote_port = fields[3], fields[2].rpartition(":")[2]
        if state != (LISTEN if proto == "tcp" else BOUND) or (proto == "udp" and int(remote_port, 16) != 0):
            continue
        try:
            found[int(fields[9])] = Port(proto=proto, number=int(fields[1].rpartition(":")[2], 16))
        except ValueError:
            continue
    return found


def read_snapshot(output: str) -> list[Service]:
    """The agent's services from `snapshot`'s output: its process-tree roots, oldest first."""
    own: set[int] = set()
    procs: dict[int, tuple[int, int, Service]] = {}  # pid -> (parent, start time, as it was started)
    sockets: dict[int, list[int]] = {}
    tables = []
    for line in output.splitlines():
        kind, _, rest = line.partition(" ")
        fields = rest.split(" ")
        if kind == "I":
            own |= {int(f) for f in fields if f.isdigit()}
        elif kind == "P" and len(fields) >= 8 and all(f.isdigit() for f in fields[:5]):
            sockets[int(fields[0])] = [int(f) for f in fields[8:] if f.isdigit()]
            argv = _untitled(_nul_separated(fields[6]))
            if argv:
                env = dict(v.partition("=")[::2] for v in _nul_separated(fields[7]) if "=" in v)
                service = Service(argv=argv, cwd=_text(fields[5]).strip("\n") or "/", uid=int(fields[3]),
                                  gid=int(fields[4]), env=env)
                procs[int(fields[0])] = (int(fields[1]), int(fields[2]), service)
        elif kind == "N":
            tables.append(rest)
    agents = {pid for pid in procs if _agents(pid, own, procs)}
    root_of = {pid: _root(pid, agents, procs) for pid in agents}
    ports = listening("\n".join(tables))
    for pid, root in sorted(root_of.items()):
        service = procs[root][2]
        for inode in sockets.get(pid, []):
            if inode in ports and ports[inode] not in service.ports:
                service.ports.append(ports[inode])
    roots = sorted(set(root_of.values()), key=lambda pid: (procs[pid][1], pid))[:MAX_SERVICES]
    return [procs[pid][2] for pid in roots]


def _agents(pid: int, own: set[int], procs: dict[int, tuple[int, int, Service]]) -> bool:
    """Whether `pid` is the agent's: it descends from PID 1 (a process the agent detached is
    PID 1's orphan), not from the engine (an exec's parent is 0) or from the sandbox's own processes."""
    seen = set()
    while pid not in seen and pid in procs and pid not in own and pid > 1:
        seen.add(pid)
        if procs[pid][0] == 1:
            return True
        pid = procs[pid][0]
    return False


def _root(pid: int, agents: set[int], procs: dict[int, tuple[int, int, Service]]) -> int:
    """The oldest ancestor of `pid` that is the agent's: its service."""
    while procs[pid][0] in agents:
        pid = procs[pid][0]
    return pid


def _untitled(argv: list[str]) -> list[str]:
    """A command line as it was started, where a daemon rewrote it into a title (nginx's master:
    `nginx: master process /usr/sbin/nginx -c /etc/nginx/nginx.conf`): the words after `process `.
    An argument that held spaces is lost with the title; docs/verify.md says so."""
    if len(argv) == 1 and ": " in argv[0] and " process " in argv[0]:
        return argv[0].partition(" process ")[2].split() or argv
    return argv


def _nul_separated(b64: str) -> list[str]:
    return [part for part in _text(b64).split("\0") if part]


def _text(b64: str) -> str:
    try:
        return base64.b64decode(b64, validate=True)[:MAX_TEXT].decode(errors="replace")
    except (binascii.Error, ValueError):
        return ""
