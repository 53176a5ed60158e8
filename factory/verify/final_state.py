"""Final-state verification: a terminal task (Harbor, Terminal-Bench) is judged by the machine the
agent left, not by a patch.

    agent stops ─► its container frozen (the backend's `freeze`; Docker: `factory/sandbox/docker/frozen.py`), with the engine's list of
      what it changed ─► that list read: a shell, interpreter, test tool, loader or library the tests
      rely on changed ─► refused (`tampered`); start-up hooks, a stale reward ─► named in the verdict
      ─► the services the agent left running (if any) started again in a container of the frozen
      state, their ports awaited ─► a fresh container of the frozen state (in the services' network
      alone), created, started only then ─► /tests and /logs/verifier
      made empty, root's ─► the tests uploaded ─► the test script as root under the task's timeout, with
      `env -i` (a fixed PATH, nothing else of the image's environment), `bash --noprofile --norc`
      ─► the container killed ─► the reward read by the engine: reward.json, then reward.txt

The guarantee is weaker than a patch's (`Guarantee.final_state`, docs/verify.md): the agent chose the
state the tests run in. What it can do there, and what is defended, is written down in docs/verify.md.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from pathlib import PurePosixPath

from factory.protocols import SandboxBackend, StateRun
from factory.records import Check, FlagKind, Guarantee, Reason, Task, Verdict, VerdictFlag

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""The test script's PATH, whatever the image or the agent set."""
BIN_DIRS = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}
TOOLS = {
    "sh", "bash", "dash", "env", "timeout", "sleep", "rm", "mkdir", "chmod", "chown", "cat", "echo", "test", "[",
    "python", "python3", "pytest", "py.test", "pip", "pip3", "uv", "uvx", "grep", "sed", "awk", "git", "curl",
}
"""What the verifier runs and test scripts commonly do: replaced, deleted or shadowed on PATH, they
refuse the state. A test script's own command words are added to them (`relied_on`)."""
LIB_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib")
LOADER = ("/etc/ld.so.preload", "/etc/ld.so.conf", "/etc/ld.so.conf.d")
"""The dynamic loader's configuration: a preloaded library runs inside every program."""
PYTHON_HOOKS = re.compile(r"/(sitecustomize|usercustomize)\.py$|\.pth$")
"""Python start-up code that runs in every interpreter, pytest's included."""
PYTHON_LIB = re.compile(r"^(/usr(/local)?)?/lib/python3[^/]*/(?P<packages>(site|dist)-packages/)?.*\.py$")
"""Python's own modules and installed packages: one changed or deleted runs in the tests'
interpreter (`os._exit(0)` appended to pytest's). A module added to the standard library's own
folder shadows an installed package of its name; one added among installed packages is an install."""
PYCACHE = "/tmp/factory-pycache"
"""The tests' interpreters keep bytecode here (`PYTHONPYCACHEPREFIX`), never in a `__pycache__` the
agent could have filled with bytecode that claims to be a module's."""
SHELL_HOOKS = re.compile(r"^/(etc/(profile|bash\.bashrc|environment|profile\.d/.*)|root/\.(bashrc|profile|bash_profile|bash_login))$"
                         r"|^/home/[^/]+/\.(bashrc|profile|bash_profile)$")
"""Start-up files a login or interactive shell reads: the test script's bash reads none of them."""
VERIFIER_LOGS = "/logs/verifier"
REWARD_JSON, REWARD_TXT = f"{VERIFIER_LOGS}/reward.json", f"{VERIFIER_LOGS}/reward.txt"
END_OF_TESTS = """started() { local stat; stat=$(< "$1/stat") && read -ra f <<< "${stat##*) }" && echo "${f[19]}"; }
mine=$(started /proc/$$)
/usr/bin/timeout -k 5 "$1" /usr/bin/bash --noprofile --norc "$2"; code=$?
for proc in /proc/[0-9]*; do
  [ "${proc#/proc/}" = $$ ] || ! since=$(started "$proc" 2>/dev/null) || [ "$since" -lt "$mine" ] ||
    ! mapfile -d '' argv < "$proc/cmdline" 2>/dev/null || [ ${#argv[@]} = 0 ] || echo "factory-left-running: ${argv[*]}"
done
exit $code"""
"""The test script, then every process it left behind (started since this shell: the container's
own keepalive is older) named; the container is killed next. Bash builtins only, after the script: the programs of the
state are the agent's. A process the tests started (the program
under test, a hook of a tool they ran) may write the reward while the script runs or after it: a
verdict whose tests left any running takes no reward."""
LEFT_RUNNING = "factory-left-running: "
SERVICES_SECONDS = 30.0
"""How long the agent's services get to listen again on their ports before the tests run anyway."""
TIMED_OUT = {124, 137}
"""`timeout`'s exit codes: the limit passed (124), or the kill after it (137)."""


COMMAND_WORD = re.compile(
    r"(?:^|[|;&({`]|\$\()\s*"  # where a command starts
    r"(?:(?:if|then|elif|else|while|until|do|time|exec|command|nohup|!|[A-Za-z_]\w*=\S*)\s+)*"  # words before it
    r"(?:[\w./-]*/)?([A-Za-z_][\w.+-]*)", re.M)
"""A command's name where a shell script runs one: after a keyword (`if sha256sum --check ...`),
an assignment or a path (`/usr/bin/sha256sum`) too."""


def relied_on(task: Task) -> set[str]:
    """The command names the verification and the task's test script rely on."""
    assert task.terminal is not None
    script = task.terminal.tests.get(task.terminal.script, "")
    return TOOLS | {w for w in COMMAND_WORD.findall(script) if not w.isupper()}


def judge_changes(changes: list[tuple[str, str]], names: set[str]) -> tuple[list[str], list[VerdictFlag]]:
    """What the agent changed outside its work dir: the changes that refuse the state, and the flags
    that name the rest a reviewer should see."""
    refused, hooks, stale = [], [], []
    new_homes = {path for kind, path in changes if kind == "added" and re.fullmatch(r"/home/[^/]+", path)}
    for kind, path in changes:
        parent, name = str(PurePosixPath(path).parent), PurePosixPath(path).name
        if kind == "…":
            refused.append("more changes than were recorded")
        elif path in BIN_DIRS or path in ("/lib", "/lib64", "/usr/lib"):
            if kind != "changed":  # a changed folder is one whose files changed: those are listed themselves
                refused.append(f"{kind} {path}")
        elif parent in BIN_DIRS and (name in names or _versioned(name) in names) or path.startswith(LOADER) or path.startswith(LIB_DIRS) and ".so" in name and kind != "added" or PYTHON_HOOKS.search(path) and kind != "deleted" or _python_module_changed(kind, path):
            refused.append(f"{kind} {path}")
        elif SHELL_HOOKS.search(path) and parent not in new_homes:  # `useradd -m` gives a new home its own
            hooks.append(f"{kind} {path}")
        elif path == "/logs" and kind == "deleted" or path.startswith(VERIFIER_LOGS + "/"):
            stale.append(f"{kind} {path}")
    flags = []
    if hooks:
        flags.append(VerdictFlag(kind=FlagKind.altered_system,
                                 detail=f"shell start-up files (not read by the tests' bash): {_few(hooks)}"))
    if stale:
        flags.append(VerdictFlag(kind=FlagKind.stale_reward, detail=f"emptied before the tests: {_few(stale)}"))
    return refused, flags


def _python_module_changed(kind: str, path: str) -> bool:
    module = PYTHON_LIB.match(path)
    return module is not None and (kind != "added" or module.group("packages") is None)


def _left_running(output: str) -> tuple[str, list[str]]:
    """The test script's output without `END_OF_TESTS`'s lines, and the processes they name."""
    lines = output.splitlines(keepends=True)
    left = [line.removeprefix(LEFT_RUNNING).strip() for line in lines if line.startswith(LEFT_RUNNING)]
    return "".join(line for line in lines if not line.startswith(LEFT_RUNNING)), left


def _versioned(name: str) -> str:
    """A versioned program's name without its version (`python3.11` -> `python`): what the
    unversioned name of it points to is as relied on as the name."""
    match = re.fullmatch(r"(.+?)[\d.]+", name)
    return match.group(1) if match else name


def _few(items: list[str], n: int = 5) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


def read_reward(task: Task, exit_code: int, reward_json: bytes | None, reward_txt: bytes | None) -> float | str:
    """The reward the tests wrote, or why there is none: reward.json (`{"reward": x}`, or its one
    number), then reward.txt; Terminal-Bench 1's exit code when its script writes neither."""
    assert task.terminal is not None
    if reward_json is not None:
        try:
            data = json.loads(reward_json)
            values = data if isinstance(data, dict) else {"reward": data}
            value = values["reward"] if "reward" in values else next(iter(values.values())) if len(values) == 1 else None
            return float(value)
        except (ValueError, TypeError, StopIteration, KeyError):
            return f"reward.json holds no reward: {reward_json[:200]!r}"
    if reward_txt is not None:
        try:
            return float(reward_txt.decode(errors="replace").strip())
        except ValueError:
            return f"reward.txt is not a number: {reward_txt[:200]!r}"
    if task.terminal.reward_from_exit:
        return 1.0 if exit_code == 0 else 0.0
    return "the tests wrote no reward (/logs/verifier/reward.json or reward.txt)"


class FinalStateVerifier:
    """Judges a terminal task's frozen final state (an image id) with its hidden tests."""

    def __init__(self, backend: SandboxBackend, *, run_id: str, memory: str, threshold: float = 1.0):
        self.backend, self.run_id, self.memory, self.threshold = backend, run_id, memory, threshold

    async def verify(self, task: Task, state: str | None) -> Verdict:
        started = time.monotonic()
        verdict = await self._verify(task, state)
        return verdict.model_copy(update={"guarantee": Guarantee.final_state, "seconds": time.monotonic() - started})

    async def _verify(self, task: Task, state: str | None) -> Verdict:
        spec = task.terminal
        assert spec is not None
        if state is None:
            return Verdict(resolved=False, reason=Reason.no_report, decided_by=Check.tests,
                           detail="no final state: the agent's container was not frozen when it stopped")
        refused, flags = judge_changes(await self.backend.state_changes(state), relied_on(task))
        if refused:
            why = f"the final state changed what the tests rely on: {_few(refused)}"
            return Verdict(resolved=False, reason=Reason.tampered, decided_by=Check.tamper_probe, detail=why,
                           flags=[VerdictFlag(kind=FlagKind.altered_system, detail=why), *flags])
        limits = {"memory": f"{spec.memory_mb}m" if spec.memory_mb else self.memory, "cpus": spec.cpus or 1.0}
        attempt_id = f"verify-{task.instance_id}"[:60]
        services, beside = await self.backend.state_services(state), None
        try:
            if services:  # started again beside the tests, in a container of their own
                beside = await self.backend.open_services(state, run_id=self.run_id, attempt_id=attempt_id, **limits)
                lost = await beside.serve(services, min(SERVICES_SECONDS, spec.verifier_seconds))
                flags.append(VerdictFlag(kind=FlagKind.services, detail=_few([str(s) for s in services])
                                         + (f"; {_few(lost)}" if lost else "")))
            run = await self.backend.open_state(state, run_id=self.run_id, attempt_id=attempt_id, beside=beside, **limits)
            try:
                return await self._tests(task, run, flags)
            finally:
                await run.close()
        finally:
            if beside is not None:
                await beside.close()

    async def _tests(self, task: Task, run: StateRun, flags: list[VerdictFlag]) -> Verdict:
        """The hidden tests run in `run`, a container of the final state, and the reward they wrote."""
        spec = task.terminal
        assert spec is not None
        await run.start()
        fresh = await run.run(["/usr/bin/env", "-i", f"PATH={PATH}", "/usr/bin/bash", "--noprofile", "--norc", "-c",
                               f"rm -rf /tests {VERIFIER_LOGS} && mkdir -p /tests {VERIFIER_LOGS} "
                               f"&& chown root:root /tests /logs {VERIFIER_LOGS} && chmod 755 /tests /logs {VERIFIER_LOGS}"], 60)
        if fresh.exit_code != 0:
            return Verdict(resolved=False, reason=Reason.no_report, decided_by=Check.tests, flags=flags,
                           detail=f"could not make /tests and {VERIFIER_LOGS} in the final state: {fresh.output[-500:]}")
        await run.put("/tests", spec.tests, executable={spec.script})
        env = [f"{k}={v}" for k, v in {**spec.verifier_env, "PATH": PATH, "HOME": "/root", "LANG": "C.UTF-8",
                                        "PYTHONPYCACHEPREFIX": PYCACHE}.items()]
        ran = await run.run(["/usr/bin/env", "-i", *env, "/usr/bin/bash", "--noprofile", "--norc", "-c", END_OF_TESTS,
                             "tests", f"{spec.verifier_seconds:g}", f"/tests/{spec.script}"],
                            spec.verifier_seconds, workdir=task.workdir)
        await run.stop()
        output, left = _left_running(ran.output)
        if ran.exit_code is None or ran.exit_code in TIMED_OUT:
            return Verdict(resolved=False, reason=Reason.timeout, decided_by=Check.tests, flags=flags,
                           detail=f"the tests ran past the task's {spec.verifier_seconds:g} s: {output[-500:]}")
        if left:  # one of them may have written the reward, before or after the script's own write
            flags.append(VerdictFlag(kind=FlagKind.left_running, detail=_few(left)))
            return Verdict(resolved=False, reason=Reason.no_report, decided_by=Check.tests, flags=flags,
                           detail=f"the tests left processes running ({_few(left, 3)}): the reward may be theirs, "
                                  "not the tests'; it is not taken")
        reward = read_reward(task, ran.exit_code, await run.read(REWARD_JSON), await run.read(REWARD_TXT))
        if isinstance(reward, str):
            return Verdict(resolved=False, reason=Reason.no_report, decided_by=Check.tests, flags=flags,
                           detail=f"{reward}; {shlex.quote(spec.script)} said: {output[-500:]}")
        resolved = reward >= self.threshold
        return Verdict(resolved=resolved, reason=None if resolved else Reason.tests_failed, decided_by=Check.tests,
                       reward=reward, flags=flags, detail="" if resolved else
                       f"reward {reward:g} < {self.threshold:g}: {output[-500:]}")
