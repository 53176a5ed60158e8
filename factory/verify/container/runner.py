"""Trusted test runner, run as root inside a fresh verification container (stdlib only).

Started as `python3 -I -S runner.py JOB.json`: isolated and without `site`, so nothing of
the repo or its environment (a sitecustomize, a .pth file) runs as root. It starts pytest
as the test user with plugin autoload off, a trusted configuration and the reporting
plugin, and reads the plugin's records from a private pipe until pytest exits; then it
kills every process of that user and counts what still arrives as late. It holds no secret
and knows nothing of controls: the job (root-only) lists every test to run and nothing
that tells a control from a real test. Stdout and exit codes are never read as results.
The report lands in a root-only file.

Python 3.6+: the conda environments of older SWE-bench images run it.

usage: python3 -I -S runner.py JOB.json
"""

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# pytest's arguments come from a file (thousands of test ids would overflow a command line)
BOOT = (
    "import json, sys; sys.path.insert(0, sys.argv[1]); import factory_pytest_plugin as p; "
    "import pytest; sys.exit(pytest.main(json.load(open(sys.argv[2])), plugins=[p]))"
)
MAX_BYTES = 64 * 2**20
DRAIN_SECONDS = 2.0
EXIT_GRACE = 30.0
"""Seconds pytest may take to exit once its session has ended: an exit handler that stalls
(or walks the disk) ends the run as a timeout here, not at the full test time limit."""
DONE = b'"kind": "done"'
BATCH_SECONDS = 0.02
"""After each read, the runner lets the pipe fill this long before it looks again: the plugin
writes a record per report and blind check (~600 a run), and waking for each one cost the
runner ~7 ms of CPU (select, read, poll). The pipe (64 KB) holds what comes meanwhile; how soon
the runner sees pytest exit (up to 0.2 s after it, as before) is unchanged."""


def become(uid):
    """A preexec_fn that drops to the test user (`Popen(user=...)` needs 3.9)."""

    def drop():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

    return drop


def kill_user(uid):
    """Kill every process of the test user: kill(-1) from a process of that user (all of them
    at once, so a fork bomb cannot outrun it), then a sweep of /proc for good measure."""
    try:
        pid = os.fork()
    except OSError:
        pid = -1
    if pid == 0:
        try:
            become(uid)()
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
    for _ in range(3):
        for name in filter(str.isdigit, os.listdir("/proc")):
            try:
                if os.stat("/proc/" + name).st_uid == uid:
                    os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass


def command_line(job):
    return [
        "-c", job["ini"], "--rootdir", job["workdir"], "-p", "no:cacheprovider", "-o", "addopts=",
        "-q", "--tb=short", *[arg for value in job.get("warnings", []) for arg in ("-W", value)], *job["ids"],
    ]


def drain(fd, until):
    """Read what the pipe holds (until EOF, or until `until` on the monotonic clock)."""
    chunks = []
    while sum(map(len, chunks)) <= MAX_BYTES:
        ready, _, _ = select.select([fd], [], [], max(0.0, until - time.monotonic()))
        if not ready:
            break
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def main():
    with open(sys.argv[1]) as fh:
        job = json.load(fh)
    uid = job["uid"]
    results_r, results_w = os.pipe()
    home = "/tmp/factory-home"
    os.makedirs(home, exist_ok=True)
    os.chown(home, uid, uid)
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": home,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "FACTORY_REPORT_FD": str(results_w),
        "FACTORY_TOUCHED": json.dumps(job["touched"]),
        "FACTORY_CHANGED": json.dumps(job.get("changed", {})),
        "FACTORY_WORKDIR": job["workdir"],
    }
    args = os.path.join(HERE, "args.json")  # root's, readable: every test, controls unmarked
    with open(args, "w") as fh:
        json.dump(command_line(job), fh)
    log = open(job["log"], "wb")  # noqa: SIM115 - pytest writes to it until it is killed
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-I", "-c", BOOT, HERE, args],
        cwd=job["workdir"], env=env, preexec_fn=become(uid), stdin=subprocess.DEVNULL, stdout=log,
        stderr=subprocess.STDOUT, pass_fds=(results_w,), start_new_session=True,
    )
    os.close(results_w)
    os.set_blocking(results_r, False)

    chunks, size, timed_out, eof, ended = [], 0, False, False, None
    deadline = started + job["timeout"]
    while size <= MAX_BYTES:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([results_r], [], [], min(left, 0.2))
        if ready:
            try:
                chunk = os.read(results_r, 65536)
            except BlockingIOError:
                chunk = None
            if chunk == b"":
                eof = True  # every writer has closed its end
                break
            if chunk:
                if ended is None and DONE in (chunks[-1][-len(DONE):] if chunks else b"") + chunk:
                    ended = time.monotonic()  # the session is over: pytest has EXIT_GRACE left to exit
                    deadline = min(deadline, ended + EXIT_GRACE)
                chunks.append(chunk)
                size += len(chunk)
                time.sleep(BATCH_SECONDS)
        if child.poll() is not None:
            break
    exited = child.poll() is not None
    # what pytest wrote before it exited; after this, anything new comes from a process that outlived it
    chunks.append(drain(results_r, time.monotonic()))
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)
    kill_user(uid)
    late = 0 if eof else len(drain(results_r, time.monotonic() + DRAIN_SECONDS))
    exit_code = child.wait()
    log.close()

    data = b"".join(chunks)
    records, malformed = [], 0
    for line in data.split(b"\n")[:-1]:  # an unfinished last line is no record
        try:
            records.append(json.loads(line.decode()))
        except ValueError:
            malformed += 1
    with open(job["log"], "rb") as fh:
        fh.seek(0, 2)
        fh.seek(max(0, fh.tell() - 4000))
        tail = fh.read().decode(errors="replace")
    report = {
        "records": records, "malformed": malformed, "late": late if exited else 0,
        "overflow": len(data) > MAX_BYTES, "timed_out": timed_out,
        "exit_stalled": timed_out and ended is not None, "exit_code": exit_code,
        "seconds": time.monotonic() - started, "log_tail": tail,
    }
    fd = os.open(job["report"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(report, out)


if __name__ == "__main__":
    main()
