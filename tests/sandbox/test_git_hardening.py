"""The factory's git never reads the agent's `.git` and never runs anything the agent configured.

Every test is an agent (the sandbox user, or root when the pipeline says so) that sets a trap
for the factory's git, then asks for the diff: no trap may fire, the diff has a/ and b/
prefixes and exactly the agent's file changes, and the agent's own git keeps working.
"""

from __future__ import annotations

import re
import uuid

import pytest

from factory.config import SandboxConfig
from factory.records import StartState
from factory.sandbox.docker import DockerSandbox
from factory.sandbox.git import FACTORY_DIR, GIT, GIT_DIR
from tests.conftest import BASE_IMAGE

pytestmark = pytest.mark.docker

REPO = {"pkg/__init__.py": "def add(a, b):\n    return a + b\n", "README.md": "demo\n", "old.txt": "bye\n"}
AGENT_WORK = "sed -i 's/a + b/a - b/' pkg/__init__.py && echo new > notes.txt && rm old.txt"
AGENT_FILES = {"pkg/__init__.py", "notes.txt", "old.txt"}


async def prepared(user: str = "agent") -> DockerSandbox:
    sandbox = await DockerSandbox.create(BASE_IMAGE, SandboxConfig(user=user), workdir="/testbed",
                                         run_id=f"git-hardening-{uuid.uuid4().hex[:6]}")
    try:
        for path, text in REPO.items():
            await sandbox.write_file(f"/testbed/{path}", text, owner="root")
        await sandbox.prepare(StartState())
    except BaseException:
        await sandbox.close()
        raise
    return sandbox


async def run(sandbox: DockerSandbox, cmd: str, **kwargs) -> str:
    result = await sandbox.exec(cmd, timeout=60, **kwargs)
    assert result.exit_code == 0, result.output
    return result.output


def changed_files(diff: str) -> set[str]:
    """The files of a git diff, checking on the way that every header has a/ and b/ prefixes."""
    headers = re.findall(r"(?m)^diff --git (\S+) (\S+)$", diff)
    assert len(headers) == diff.count("diff --git ")
    assert all(old == "a/" + new[2:] and new.startswith("b/") for old, new in headers), headers
    for line in re.findall(r"(?m)^(?:---|\+\+\+) .*$", diff):
        assert re.fullmatch(r"--- (a/\S+|/dev/null)|\+\+\+ (b/\S+|/dev/null)", line), line
    return {new[2:] for _, new in headers}


def traps(tag: str, user: str) -> str:
    """Shell, run as the agent, that arms every trap we know of; each one, if run, writes
    /tmp/pwned-<tag>-<name> (and /root/pwned-..., which only root can write)."""
    pwn = f"/tmp/pwn-{tag}"
    config = f"""
[core]
\tfsmonitor = {pwn} fsmonitor
\thooksPath = /tmp/hooks-{tag}
\tattributesFile = /tmp/attributes-{tag}
\tpager = {pwn} pager
\teditor = {pwn} editor
\tsshCommand = {pwn} ssh
\tuntrackedCache = true
[diff]
\texternal = {pwn} external
\tnoprefix = true
\tmnemonicPrefix = true
\trelative = true
[diff "pwn"]
\tcommand = {pwn} diffdriver
\ttextconv = {pwn} textconv
[filter "pwn"]
\tclean = {pwn} clean
\tsmudge = {pwn} smudge
\trequired = true
[commit]
\tgpgSign = true
[gpg]
\tprogram = {pwn} gpg
[safe]
\tdirectory = *
[include]
\tpath = /tmp/included-{tag}
"""
    hooks = ["pre-commit", "post-commit", "post-index-change", "pre-auto-gc", "fsmonitor-watchman", "reference-transaction"]
    script = [
        f"printf '#!/bin/sh\\ntouch /tmp/pwned-{tag}-$1 /root/pwned-{tag}-$1 2>/dev/null\\ncat\\n' > {pwn} && chmod +x {pwn}",
        f"mkdir -p /tmp/hooks-{tag} .git/hooks",
        *(f"printf '#!/bin/sh\\n{pwn} hook-{h} </dev/null\\n' | tee /tmp/hooks-{tag}/{h} > .git/hooks/{h}" for h in hooks),
        f"chmod +x /tmp/hooks-{tag}/* .git/hooks/*",
        f"printf '* filter=pwn diff=pwn\\n' | tee /tmp/attributes-{tag} .git/info/attributes > .gitattributes",
        f"printf '[core]\\n\\tfsmonitor = {pwn} included\\n' > /tmp/included-{tag}",
        f"cat >> .git/config <<'EOF'\n{config}\nEOF",
        f"cat >> ~/.gitconfig <<'EOF'\n{config}\nEOF",
        f"mkdir -p /tmp/evil-objects-{tag} && echo /tmp/evil-objects-{tag} >> .git/objects/info/alternates",
    ]
    if user == "root":  # root reaches every config file git could read, the factory's own included
        script += [
            f"cat >> /etc/gitconfig <<'EOF'\n{config}\nEOF",
            f"mkdir -p /root/.config/git && cat >> /root/.config/git/config <<'EOF'\n{config}\nEOF",
            "printf '* filter=pwn diff=pwn\\n' | tee /etc/gitattributes /root/.config/git/attributes >/dev/null",
            f"cat >> {GIT_DIR}/config <<'EOF'\n{config}\nEOF",
            f"printf '* filter=pwn diff=pwn\\n' > {GIT_DIR}/info/attributes",
            f"mkdir -p {GIT_DIR}/hooks && cp /tmp/hooks-{tag}/* {GIT_DIR}/hooks/",
            f"printf 'export GIT_EXTERNAL_DIFF=\"{pwn} env\" GIT_DIR=/tmp GIT_CONFIG_PARAMETERS=\\n' "
            "| tee -a /etc/bash.bashrc /root/.bashrc /root/.profile /etc/profile >/dev/null",
        ]
    return "\n".join(["set -e", *script])


@pytest.mark.parametrize("user", ["agent", "root"])
async def test_nothing_the_agent_configured_runs_when_the_factory_diffs(docker_client, user):
    sandbox = await prepared(user)
    tag = uuid.uuid4().hex[:10]
    try:
        await run(sandbox, AGENT_WORK)
        await run(sandbox, "git read-tree --empty")  # a replaced index (before the hooks are armed)
        await run(sandbox, traps(tag, user))

        diff = await sandbox.diff()

        fired = await sandbox.exec(f"ls /tmp/pwned-{tag}-* /root/pwned-{tag}-* 2>/dev/null", user="root")
        assert fired.output == ""
        assert changed_files(diff) == AGENT_FILES | {".gitattributes"}
        assert "-    return a + b\n+    return a - b" in diff and "+new" in diff and "-bye" in diff
        assert "GIT binary patch" not in diff and "Binary files" not in diff  # no diff driver ran, none applied
        # the traps are live: the agent's own git runs them (as the agent)
        await sandbox.exec("git add -A; git status", timeout=60)
        assert (await sandbox.exec(f"ls /tmp/pwned-{tag}-clean", user="root")).exit_code == 0
    finally:
        await sandbox.close()


@pytest.mark.parametrize("user", ["agent", "root"])
async def test_the_agent_keeps_a_git_of_its_own_and_cannot_touch_the_factorys(docker_client, user):
    sandbox = await prepared(user)
    try:
        assert (await run(sandbox, "git status --porcelain; git log --oneline")).split() == [
            sandbox.start_commit[:7], "start", "state"]
        # its objects are the factory's, linked: readable, not writable, not its to chmod
        blob = (await run(sandbox, "find .git/objects -type f | head -n 1")).strip()
        assert (await run(sandbox, f"stat -c '%U %a %h' {blob}")).split() == ["root", "444", "2"]
        if user == "agent":
            assert "Operation not permitted" in (await sandbox.exec(f"chmod u+w {blob}")).output
        await run(sandbox, AGENT_WORK)
        assert set((await run(sandbox, "git status --porcelain")).split()) == {"M", "D", "??", *AGENT_FILES}
        assert "+    return a - b" in await run(sandbox, "git diff")
        # the agent's commits, branches and gc change nothing for the factory
        await run(sandbox, "git config user.name a && git config user.email a@b && git add -A && git commit -qm mine "
                           "&& git checkout -q -b other && git commit -q --allow-empty -m more && git gc -q --prune=now")
        assert changed_files(await sandbox.diff()) == AGENT_FILES
        owner = await run(sandbox, f"stat -c %U .git .git/index; stat -c '%U %a' {FACTORY_DIR}", user="root")
        assert owner.split() == [user, user, "root", "700"]
        if user == "agent":
            refused = await sandbox.exec(f"ls {GIT_DIR}; touch {GIT_DIR}/config; "
                                         "chmod u+w $(find .git/objects -type f | head -n 1)")
            assert refused.output.count("Permission denied") == 2
    finally:
        await sandbox.close()


async def test_nested_repositories_enter_the_diff_as_plain_files(docker_client):
    sandbox = await prepared()
    try:
        commit = "git -c user.name=a -c user.email=a@b commit -qm x"
        await run(sandbox, " && ".join([
            f"mkdir -p vendor/lib && cd vendor/lib && git init -q && echo a > a.py && git add . && {commit}",
            "mkdir deeper && cd deeper && git init -q && echo c > c.py && cd /testbed",  # nested in nested
            "mkdir scratch && cd scratch && git init -q && echo b > b.py && cd ..",  # no commit at all
            "cd pkg && git init -q && echo n > new.py && echo '# x' >> __init__.py && cd ..",  # around tracked files
            "mkdir linked && echo 'gitdir: /nowhere' > linked/.git && echo d > linked/d.py",
            "mkdir linked2 && echo 'gitdir: /testbed/vendor/lib/.git' > linked2/.git && echo e > linked2/e.py",
            "mkdir -p ignored/repo && echo 'ignored/' > .gitignore && cd ignored/repo && git init -q && echo f > f.py",
            # the agent's own .git becomes a file pointing elsewhere: its git still works
            "cd /testbed && mv .git /tmp/agent-git && echo 'gitdir: /tmp/agent-git' > .git",
        ]))
        diff = await sandbox.diff()
        assert changed_files(diff) == {".gitignore", "vendor/lib/a.py", "vendor/lib/deeper/c.py", "scratch/b.py",
                                       "pkg/new.py", "pkg/__init__.py", "linked/d.py", "linked2/e.py"}
        assert "160000" not in diff and "Subproject" not in diff
        status = await run(sandbox, "git status --porcelain")
        assert "?? vendor/" in status and "?? scratch/" in status
    finally:
        await sandbox.close()


async def test_the_diff_is_the_bytes_of_the_work_tree_whatever_the_attributes_say(docker_client):
    sandbox, fresh = await prepared(), await prepared()
    try:
        attributes = "*.txt text eol=crlf\n*.lf text eol=lf\n*.u16 working-tree-encoding=UTF-16\n*.c ident\n*.py -text\n"
        await run(sandbox, " && ".join([
            f"printf '{attributes}' > .gitattributes",
            "printf 'a\\r\\nb\\n' > mixed.txt && printf 'c\\r\\n' > crlf.lf && printf 'hi\\n' > raw.u16",
            "printf '$Id: not-a-hash $\\n' > id.c && printf 'x = 1\\r\\n' >> pkg/__init__.py",
        ]))
        diff = await sandbox.diff()
        assert changed_files(diff) == {".gitattributes", "mixed.txt", "crlf.lf", "raw.u16", "id.c", "pkg/__init__.py"}
        # applied the way the verifier applies it, it gives the same bytes
        await fresh.write_file("/tmp/agent.patch", diff, owner="root")
        await run(fresh, f"{GIT} apply --whitespace=nowarn /tmp/agent.patch", user="root")
        checksums = "find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum"
        assert await run(fresh, checksums) == await run(sandbox, checksums)
    finally:
        await sandbox.close()
        await fresh.close()
