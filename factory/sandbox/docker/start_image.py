"""Start images: the clean, history-free repo of an image, prepared once and reused by every sandbox.

A start state made from scratch costs O(repo): the repo's history removed, bytecode swept,
every file handed to the agent user (on overlayfs, a copy of each file) and hashed into a
new git commit. On a SWE-smith repo of thousands of files that is tens of seconds per
attempt. A start image does all of that once per (image, work dir, user) and is committed as
a local image, `factory-start/<key>:<version>`; a sandbox started from it has left to do only
what its task changes: the bug patch, the hidden tests' removal, the ownership of the files
those touched, and one commit (`DockerSandbox.prepare`).

It is made in two containers, each committed:

1. From the image: the repo's own `.git` (its history, which holds the fix) moves to
   `REPO_GIT` in the factory's root-only folder (a task at another `base_commit` checks out
   from it; `prepare` removes it before the agent runs); build artifacts of the original code
   go; the agent user is made and owns the repo.
2. From that: `IMAGE_GIT`, a git dir of the factory's whose index stages the whole repo and
   whose one pack holds its objects. It is made in a second container so that the index's
   stat cache describes the files as every later container sees them (a committed layer
   gives its files new inodes and change times): git then re-reads only what a task changed.

`IMAGE_GIT` holds the clean sources, the fix included. It is root's, mode 700, and `prepare`
packs only the objects its start commit reaches into the sandbox's own git dir and removes
`IMAGE_GIT` before the agent runs, so a root agent finds nothing of it either (a file removed
in a container's own layer cannot be read back from inside).

An image whose work dir is missing, or is `/`, has no start image: its sandboxes make the
start state from scratch, as before.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import shlex

from factory.errors import EngineError, SandboxError
from factory.sandbox.docker import engine
from factory.sandbox.git import FACTORY_DIR, git, init_git_dir, stage

log = logging.getLogger(__name__)

PREFIX = "factory-start/"
TASK_PREFIX = "factory-task/"
"""A task's start-state image (`factory.sandbox.docker.task_image`): already a start image, and more."""
VERSION = "v2"  # bump when what a start image holds changes: old ones are then never used
REPO_GIT = f"{FACTORY_DIR}/repo.git"
IMAGE_GIT = f"{FACTORY_DIR}/image.git"
LABEL_OF = "factory.start-of"  # the id of the image a start image was made of
# $user exists after this (made where the image lacks it), or the line says why not
ENSURE_USER = r"""
if [ "$user" != root ] && ! id -u "$user" >/dev/null 2>&1; then
  if command -v useradd >/dev/null 2>&1; then
    useradd --create-home --shell /bin/sh "$user" >/dev/null 2>&1
  else
    uid=1000; while cut -d: -f3 /etc/passwd | grep -qx "$uid"; do uid=$((uid + 1)); done
    echo "$user:x:$uid:$uid::/home/$user:/bin/sh" >> /etc/passwd && echo "$user:x:$uid:" >> /etc/group \
      && mkdir -p "/home/$user" && chown "$uid:$uid" "/home/$user"
  fi
fi
"""
STALE_ARTIFACTS = [  # one walk of the tree: a large repo's takes a while
    "find . -type d \\( -name __pycache__ -o -name .pytest_cache \\) -prune -exec rm -rf {} + "
    "-o -type f -name '*.py[co]' -exec rm -f {} +",
]
"""Steps (in the work tree) that remove what the image's own build left of the code as it was:
bytecode compiled from the original source (a decompiler reads the fix out of it; a hidden test
file's holds its names and expected values) and pytest's cache of node ids. Python compiles
anew; egg-info and other build output stay (an editable install needs them)."""
NO_REPO = "factory-no-repo"


def owned_by(owner: str, workdir: str) -> str:
    """Shell: every file of `workdir` belongs to `owner` ("uid:gid"); only those that do not
    yet are changed (on overlayfs a chown copies the file up)."""
    uid, gid = owner.split(":")
    return f"find {shlex.quote(workdir)} \\( ! -user {uid} -o ! -group {gid} \\) -exec chown -h {owner} {{}} +"


def _first(workdir: str) -> str:
    """Step 1's script ($1: the user): the repo's history out of reach, artifacts gone, the user's repo."""
    w = shlex.quote(workdir)
    return "\n".join([
        "set -e",
        f'[ -d {w} ] && [ {w} != / ] || {{ echo {NO_REPO}; exit 0; }}',
        f"cd {w}",
        f"mkdir -p {FACTORY_DIR} && chown root:root {FACTORY_DIR} && chmod 700 {FACTORY_DIR}",
        f"rm -rf {REPO_GIT}; if [ -e .git ]; then mv .git {REPO_GIT}; fi",
        # packed, so that removing it from each sandbox is a few files, not one per object
        f"if [ -d {REPO_GIT} ]; then {{ {git(REPO_GIT)} repack -a -d -q && {git(REPO_GIT)} prune-packed; }} || true; fi",
        *STALE_ARTIFACTS,
        'user=$1',
        ENSURE_USER,
        'if [ "$user" != root ]; then ' + owned_by('$(id -u "$user"):$(id -g "$user")', workdir) + "; fi",
        "echo factory-start-done",
    ])


def _second(workdir: str) -> str:
    """Step 2's script: `IMAGE_GIT`, its index over the whole repo, its objects in one pack."""
    g = git(IMAGE_GIT, workdir)
    return " && ".join([
        "set -e",
        f"cd {shlex.quote(workdir)}",
        *init_git_dir(IMAGE_GIT),
        stage(g, f"{FACTORY_DIR}/nested"),
        f"{g} update-ref refs/heads/snapshot $(echo snapshot | {g} commit-tree $({g} write-tree))",
        f"{g} repack -a -d -q --window=0",
        f"{g} prune-packed",
        # entries written in the same second as their file are "racily clean" and read again
        # by every sandbox; a second later their stat data can be trusted
        f"sleep 1 && {{ {g} update-index -q --refresh || true; }}",
        "echo factory-start-done",
    ])


_made: dict[tuple[str, str, str], asyncio.Future[str]] = {}


async def start_image(image: str, workdir: str, user: str, *, again: bool = False) -> str:
    """The start image of `image` for sandboxes of `user` at `workdir` (made when missing), or
    `image` itself when it has none. Concurrent needs share one making of it; `again` looks
    anew, for a start image that was removed since."""
    key = (image, workdir, user)
    made = _made.get(key)
    if (again or made is None or made.get_loop() is not asyncio.get_running_loop()
            or (made.done() and made.exception())):
        made = _made[key] = asyncio.ensure_future(_start_image(image, workdir, user))
    return await asyncio.shield(made)


async def _start_image(image: str, workdir: str, user: str) -> str:
    client = engine.client()
    try:
        image_id = (await engine.call(client.images.get, image)).id
    except EngineError:
        return image  # not here (yet): creating the sandbox says so, in the words it has for that
    key = hashlib.sha256(f"{image_id}\0{workdir}\0{user}".encode()).hexdigest()[:24]
    tag = f"{PREFIX}{key}:{VERSION}"
    try:
        await engine.call(client.images.get, tag)
        return tag
    except EngineError:
        pass
    first = await _commit_after(image, ["sh", "-c", _first(workdir), "factory-start", user])
    if first is None:
        return image
    await _commit_after(first, ["sh", "-c", _second(workdir)], tag=tag, of=image_id)  # `first` stays, its parent
    log.info("made start image %s of %s (%s, user %s)", tag, image, workdir, user)
    return tag


async def _commit_after(image: str, command: list[str], *, tag: str | None = None, of: str = "") -> str | None:
    """Run `command` as root in a container of `image` and commit the result: the new image's
    id (tagged `tag` when given), or None when the image has no repo to make a start image of."""
    client = engine.client()
    labels = engine.labels("start-images", "start-image")
    container = await engine.made(client.containers.create, image, ["sleep", "3600"], network_mode="none",
                                  labels=labels, user="root", working_dir="/", undo=engine.discard)
    try:
        await engine.call(container.start)
        exec_id = await engine.call(client.api.exec_create, container.id, command, user="root")
        output = b"".join(await engine.call(list, engine.exec_output(client.api, exec_id["Id"], 3600)))
        text = output.decode(errors="replace")
        if NO_REPO in text:
            return None
        if "factory-start-done" not in text:
            raise SandboxError(f"could not make the start image of {of or image}: {text[-1500:]}")
        repository, _, version = (tag or "").rpartition(":")
        changes = [engine.blank_labels(labels)] + ([f'LABEL {LABEL_OF}="{of}"'] if of else [])
        # an untagged image whose making was cancelled would be nobody's: it goes (a tagged one
        # is the start image itself, whole, and the next sandbox of its image uses it)
        committed = await engine.made(container.commit, repository=repository or None, tag=version or None, pause=False,
                                      changes=changes, undo=lambda made: tag or engine.discard_image(made))
        return committed.id
    finally:
        await asyncio.shield(engine.call(engine.discard, container))
