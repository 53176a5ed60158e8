"""A command server in each sandbox: one exec held open for the sandbox's life, so a command
costs no call to the Docker engine.

The server (`SERVER`, POSIX sh and coreutils, run as root) reads one request line per command
from its stdin and runs the command the way a per-call exec did: `timeout -k 2` around
`bash -c` in the work dir, as the user (`setpriv`, groups and `HOME` from `/etc/passwd`),
stdin from /dev/null; when it returns, leftovers are killed as before (a user's: `kill -9 -1`
as that user, from the `sh` that ran `timeout`, so the server never forks while a fork bomb
holds every pid the container may have; root's: every process but init, the keepalive, the
server and its encoder, with shell builtins alone).

What comes back on its stdout is framed so that a command cannot forge the end of itself: the
command's output (stdout and stderr, in order) reaches the host only through `base64`, whose
alphabet has no `#` or `!`; a line starting with one of those is the server's own:

    host → server   hello
                    run <seq> <timeout> <user> <base64 workdir> <base64 command>
                    put <seq> <size>, then <size> bytes of a tar archive
    server → host   !<server pid> <oom kills> <puts> <the start script's ready line>   (or !fallback …)
                    <base64 lines of output> … #<seq> <exit code> <oom kills>

A sandbox that keeps detached processes (`SandboxConfig.keep_detached`, terminal tasks) starts
its server with `keep`: leftovers of a command are then only those still holding its output
(`ATTACHED`), for root as for a user, and a service the command started with its output sent
elsewhere runs on.

`put` unpacks the archive at / as root (`tar -x`, the archive's owners and modes), as the
engine's `put_archive` would, without the engine: an upload through the engine costs dockerd a
re-exec of itself to unpack it, about as much CPU as starting a container. The server reads the
archive with GNU `head -c`, which never reads past the size it is given, so the stream stays in
step; `<puts>` is 0 where the image lacks GNU head or tar, and the host then uploads through the engine.

The server says nothing before the host's `hello`: docker-py hands over the socket after
reading the response's headers, and bytes that came with them would be lost (see
`engine.exec_output`). A closed stream is how the host learns that the container (or the server)
is gone; the sandbox then asks the engine why (`DockerSandbox._crashed`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import re
import socket
import struct

from factory.sandbox.docker import engine
from factory.sandbox.output import OutputBuffer

RUNTIME = "/run/factory"
"""The start script's and the command server's files: a tmpfs of each sandbox's own (`DockerSandbox`),
never in the container's layer, so no commit of it (a task's start-state image, a frozen final state)
holds a ready line, a server's pid or its fifo that a container of that image would take for its own."""
READY = f"{RUNTIME}/start"
PIDFILE = f"{RUNTIME}/execd.pid"
NEEDS = "bash base64 mkfifo timeout setpriv"
ATTACHED = (
    'o=$(readlink /proc/$$/fd/1); held() { ls -l /proc/[0-9]*/fd/1 /proc/[0-9]*/fd/2 2>/dev/null '
    '| while read -r _ _ _ _ _ _ _ _ f _ t; do p=${f#/proc/}; p=${p%%/*}; [ "$t" = "$o" ] && [ "$p" != $$ ] && echo "$p"; done; }; '
    '[ -z "$(held)" ] || { sleep 0.2; for p in $(held); do kill -9 "$p"; done; } 2>/dev/null'
)
"""Shell, run by the shell a command ran under once it returned: kills every process still writing to
the command's output (its stdout, as this shell's), which would hold the command open, and no other.
One found is given a moment first: a process the command started in the background may not yet have
redirected its output when the command returns. The listings run in subshells whose own output is a
pipe, so they never list themselves."""
# The root sweep, as `DockerSandbox._kill_leftovers` has it, also sparing the server and its encoder.
SERVER = r"""exec 2>/dev/null
keep=$1
left='kill -9 -1 2>/dev/null'
[ "$keep" = keep ] && left='$ATTACHED'
read -r hello || exit 0
i=0; while [ ! -s $READY ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i + 1)); done
read -r ready < $READY
for t in $NEEDS; do command -v $t >/dev/null || { echo "!fallback 0 0 $ready"; exit 0; }; done
fifo=$RUNTIME/execd.$$
tar=/run/factory-execd.$$.tar
mkfifo -m 600 "$fifo" || { echo "!fallback 0 0 $ready"; exit 0; }
trap 'rm -f "$fifo" "$tar" "$tar.err"' EXIT
puts=0
case $(head --version) in *coreutils*) command -v tar >/dev/null && puts=1 ;; esac
read -r old < $PIDFILE && [ "$old" != $$ ] && kill -9 "$old"
echo $$ > $PIDFILE
oom() {
  n=0
  for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
    [ -r "$f" ] && while read -r key value; do [ "$key" = oom_kill ] && n=$value; done < "$f"
  done
}
sweep() {
  read -r _ k _ < $READY
  [ -n "$k" ] || return
  for round in 1 2; do
    for d in /proc/[0-9]*; do
      p=${d#/proc/}
      [ "$p" -gt 1 ] && [ "$p" != "$k" ] && [ "$p" != $$ ] && [ "$p" != "$enc" ] && kill -9 "$p"
    done
  done
}
oom; echo "!$$ $n $puts $ready"
while read -r op seq t user w c; do
  if [ "$op" = put ] && [ "$puts" = 1 ]; then
    head -c "$t" > "$tar" && tar -x -f "$tar" -C / > "$tar.err" 2>&1; rc=$?
    [ ! -s "$tar.err" ] || base64 -w 76 < "$tar.err"; rm -f "$tar" "$tar.err"  # tar says nothing, as a rule
    oom; echo "#$seq $rc $n"
    continue
  fi
  [ "$op" = run ] || exit 1
  # a process per decode: the work dir only when it differs from the last command's (it seldom does)
  [ "$w" = "$lw" ] || { wd=$(printf %s "$w" | base64 -d); lw=$w; }
  cmd=$(printf %s "$c" | base64 -d; echo x); cmd=${cmd%x}
  home=; uid=; groups=--init-groups
  if [ "$user" = root ]; then uid=0; else
    while IFS=: read -r name _ u g _ h _; do
      { [ "$name" = "$user" ] || [ "$u" = "$user" ]; } && { uid=$u; gid=$g; home=$h; break; }
    done < /etc/passwd
    if [ -z "$uid" ]; then  # a uid with no name: the engine makes it gid 0, groups 0, HOME /
      case $user in ''|*[!0-9]*) ;; *) uid=$user; gid=0; home=/; groups=--groups=0 ;; esac
    fi
  fi
  base64 -w 76 < "$fifo" &
  enc=$!
  (
    [ -n "$uid" ] || { echo "unable to find user $user: no matching entries in passwd file"; exit 126; }
    cd "$wd" 2>/dev/null || { echo "chdir to cwd (\"$wd\") failed: no such file or directory"; exit 126; }
    [ "$uid" != 0 ] || [ "$keep" = keep ] || exec timeout -k 2 "${t}s" bash -c "$cmd"
    [ "$uid" != 0 ] || exec sh -c 'timeout -k 2 "$1" bash -c "$2"; rc=$?; eval "$3"; exit $rc' factory-exec "${t}s" "$cmd" "$left"
    export HOME="$home"
    exec setpriv --reuid="$uid" --regid="$gid" $groups sh -c 'timeout -k 2 "$1" bash -c "$2"; rc=$?; eval "$3"; exit $rc' factory-exec "${t}s" "$cmd" "$left"
  ) < /dev/null > "$fifo" 2>&1 &
  wait $!; rc=$?
  [ "$uid" != 0 ] || [ "$keep" = keep ] || sweep
  wait $enc
  oom; echo "#$seq $rc $n"
done
""".replace("$READY", READY).replace("$PIDFILE", PIDFILE).replace("$RUNTIME", RUNTIME).replace("$NEEDS", NEEDS).replace("$ATTACHED", ATTACHED)
GRACE = 10.0  # past a command's timeout, a stream that has not ended it is stuck
CONTROL = re.compile(rb"[#!]")
HELLO = re.compile(r"!(\d+|fallback) (\d+) ([01]) (.*)")


class Closed(Exception):
    """The stream ended (the server or its container is gone) or it could not be read."""


class Garbled(Closed):
    """Bytes the server never writes: something inside the container wrote into its stream."""


class Execd:
    """The host's end of one sandbox's command server."""

    def __init__(self, sock: socket.socket, keep: object):
        self.sock, self._keep = sock, keep  # `keep`: docker-py's socket wrapper, which holds the response
        self.sock.setblocking(False)
        self.pid = ""
        self.oom_kills = 0
        self.seq = 0
        self.puts = False  # the server can unpack uploads (`put`)
        self.busy = False  # a command was sent and its end not read: the stream is out of step
        self._mux = bytearray()  # the engine's stream frames, not yet split
        self._out = bytearray()  # the server's stdout
        self._reading = self.closing = False

    @classmethod
    async def start(cls, container_id: str, seconds: float = 90, *, keep_detached: bool = False,
                    ) -> tuple[Execd | None, str | None]:
        """Start the server: (its end, the start script's ready line); no end where the image lacks
        what the server needs, and no line either where the transport gives no plain socket (TLS,
        ssh). Two engine calls, once per sandbox."""
        api = engine.client().api
        made = await engine.call(api.exec_create, container_id, ["sh", "-c", SERVER, "factory-execd", "keep" if keep_detached else ""],
                                 stdin=True, user="root", workdir="/")
        wrapper = await engine.call(api.exec_start, made["Id"], socket=True)
        sock = getattr(wrapper, "_sock", wrapper)
        if type(sock) is not socket.socket:  # TLS or ssh transports: no plain socket to hold
            wrapper.close()
            return None, None
        server = cls(sock, wrapper)
        try:
            await server._send(b"hello\n", seconds)
            line = await server._line(asyncio.get_running_loop().time() + seconds)
        except BaseException:
            server.close()
            raise
        hello = HELLO.fullmatch(line)
        if hello is None:  # the engine's own words: the exec could not start (a container going away)
            server.close()
            raise Closed(f"the command server did not start: {line[:300]}")
        pid, oom, puts, ready = hello.groups()
        if pid == "fallback":
            server.close()
            return None, ready
        server.pid, server.oom_kills, server.puts = pid, int(oom), puts == "1"
        return server, ready

    async def run(self, cmd: str, timeout: float, user: str, workdir: str, buffer: OutputBuffer) -> int | None:
        """Run `cmd`; its output goes into `buffer`. The exit code, or None when the output flooded
        (the caller kills it). Raises `Closed` and `TimeoutError` (stuck past timeout + GRACE)."""
        self.seq += 1
        self.busy = True
        fields = (str(self.seq), f"{timeout:g}", user, _b64(workdir), _b64(cmd))
        deadline = asyncio.get_running_loop().time() + timeout + GRACE
        await self._send(("run " + " ".join(fields) + "\n").encode(), timeout + GRACE)
        return await self._end(deadline, buffer)

    async def put(self, archive: bytes, seconds: float, buffer: OutputBuffer) -> int | None:
        """Unpack a tar archive at / as root (only where `puts`); tar's messages go into `buffer`.
        tar's exit code; raises as `run` does."""
        if not self.puts:
            raise ValueError("this command server cannot unpack uploads")
        self.seq += 1
        self.busy = True
        deadline = asyncio.get_running_loop().time() + seconds
        await self._send(f"put {self.seq} {len(archive)}\n".encode() + archive, seconds)
        return await self._end(deadline, buffer)

    async def _end(self, deadline: float, buffer: OutputBuffer) -> int | None:
        """Read the current request's output into `buffer` up to its end line: its exit code, or
        None when the output flooded."""
        while True:
            mark = CONTROL.search(self._out)
            data_end = mark.start() if mark else self._out.rfind(b"\n") + 1
            if mark and data_end and self._out[data_end - 1] != ord("\n"):
                raise Garbled("a control mark inside a line of output")
            if data_end:
                buffer.add(_decode(self._out[:data_end]))
                del self._out[:data_end]
                if buffer.flooded:
                    return None
            if mark is None:
                await self._fill(deadline)
                continue
            line = await self._line(deadline)
            seq, rc, oom = (line[1:].split() + ["", "", ""])[:3] if line[:1] == "#" else ("", "", "")
            if seq != str(self.seq) or not rc.isdigit() or not oom.isdigit():
                raise Garbled(f"an end line out of place: {line[:100]!r}")
            self.busy = False
            if int(oom) > self.oom_kills and int(rc) == 137:
                buffer.note("[killed: out of memory]")
            self.oom_kills = int(oom)
            return int(rc)

    def close(self) -> None:
        """Close the stream. A read in progress (another task's command) ends at once with `Closed`:
        a socket closed under asyncio's reader would leave that read waiting until its deadline."""
        self.closing = True
        if self._reading:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)  # wakes the reader, which closes the socket
            return
        try:
            self.sock.close()
        finally:
            self._keep.close()

    async def _send(self, data: bytes, seconds: float) -> None:
        if self.closing:
            raise Closed("the stream was closed")
        try:
            async with asyncio.timeout(seconds):
                await asyncio.get_running_loop().sock_sendall(self.sock, data)
        except TimeoutError:
            raise
        except OSError as exc:
            raise Closed(f"cannot write to the command server: {exc}") from exc

    async def _line(self, deadline: float) -> str:
        while (end := self._out.find(b"\n")) < 0:
            await self._fill(deadline)
        line = self._out[:end].decode(errors="replace")
        del self._out[: end + 1]
        return line

    async def _fill(self, deadline: float) -> None:
        """Read more of the stream: the engine's frames (stream id, 3 zero bytes, length, data)."""
        if self.closing:
            raise Closed("the stream was closed")
        self._reading = True
        try:
            async with asyncio.timeout_at(deadline):
                data = await asyncio.get_running_loop().sock_recv(self.sock, 1 << 16)
        except TimeoutError:  # an OSError too, but the caller's to judge: stuck, not closed
            raise
        except OSError as exc:
            raise Closed(f"the stream from the command server broke: {exc}") from exc
        finally:
            self._reading = False
            if self.closing:
                self.close()
        if not data:
            raise Closed("the command server's stream ended")
        self._mux += data
        while len(self._mux) >= 8:
            stream, size = struct.unpack(">BxxxL", self._mux[:8])
            if len(self._mux) < 8 + size:
                break
            if stream == 1:  # the server's stderr is /dev/null: nothing on it is the server's
                self._out.extend(self._mux[8 : 8 + size])
            del self._mux[: 8 + size]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _decode(lines: bytes | bytearray) -> bytes:
    try:
        return binascii.a2b_base64(lines)
    except binascii.Error as exc:
        raise Garbled(f"output that is not the server's base64: {exc}") from exc

