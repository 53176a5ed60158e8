"""Trusted test runner, run as root inside a fresh verification container (stdlib only).

It starts pytest as an unprivileged user with plugin autoload off, in isolated mode, with
a trusted configuration and this package's reporting plugin. The plugin sends each result
through a private pipe, signed with a key handed over on a second pipe that is drained
before any code under test is imported. Stdout, exit codes and files written by the
code under test are never read as results. The report lands in a root-only file.

usage: python3 -I runner.py JOB.json
"""

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import select
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); import factory_pytest_plugin as p; "
    "import pytest; sys.exit(pytest.main(p.command_line(), plugins=[p]))"
)


def kill_user(uid):
    """Kill every process of the test user (what pytest left running)."""
    for _ in range(3):
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    os.kill(int(pid), signal.SIGKILL)
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                pass


def main():
    with open(sys.argv[1]) as fh:
        job = json.load(fh)
    uid = job["uid"]
    key = secrets.token_bytes(32)
    results_r, results_w = os.pipe()
    key_r, key_w = os.pipe()
    os.write(key_w, key)
    os.close(key_w)
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
        "FACTORY_KEY_FD": str(key_r),
        "FACTORY_JOB": sys.argv[1],
    }
    log = open(job["log"], "wb")  # noqa: SIM115 - the child writes to it until it is killed
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-I", "-c", BOOT, HERE],
        cwd=job["workdir"], env=env, user=uid, group=uid, extra_groups=[],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        pass_fds=(results_w, key_r), start_new_session=True,
    )
    os.close(results_w)
    os.close(key_r)

    lines, buf, timed_out = [], b"", False
    deadline = started + job["timeout"]
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([results_r], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(results_r, 65536)
            if not chunk:
                break
            buf += chunk
            *complete, buf = buf.split(b"\n")
            lines += complete
            if len(lines) > 1_000_000:
                break
        elif child.poll() is not None:
            # the child is gone; give what is left in the pipe a moment, in case a grandchild holds it open
            ready, _, _ = select.select([results_r], [], [], 2.0)
            if not ready:
                break
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    kill_user(uid)
    exit_code = child.wait()

    records, forged = [], 0
    for line in lines:
        mac, _, payload = line.partition(b" ")
        good = hmac.new(key, payload, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(mac, good):
            forged += 1
            continue
        records.append(json.loads(payload))
    log.close()
    with open(job["log"], "rb") as fh:
        fh.seek(0, 2)
        fh.seek(max(0, fh.tell() - 4000))
        tail = fh.read().decode(errors="replace")
    report = {
        "records": records, "forged": forged, "timed_out": timed_out, "exit_code": exit_code,
        "seconds": time.monotonic() - started, "log_tail": tail,
    }
    fd = os.open(job["report"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(report, out)


if __name__ == "__main__":
    main()
