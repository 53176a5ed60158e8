"""Task images: a task's start state reached once per run and committed, for its later sandboxes.

`DockerSandbox.prepare` takes a container of the start image to a task's start state: the bug
patch, the hidden tests out, the verifier's files in, the agent's view rewritten, the owner of what
changed, the start commit with its own pack and the agent's copy of `.git`. That is some fifteen
processes and walks of the repo, the same bytes in every sandbox of the task: each attempt's
sampling container and each verification container (0.07-0.14 CPU-s a container on the peer
bench's small repos; on a large repo the pack alone is the repo's size).

With `Preparation.share`, the first sandbox of a preparation (the image's id, work dir, user,
start state, files, rewrite) prepares as always and is committed, before anything else runs in it,
as `factory-task/<key>:<run id>`; every later sandbox of the run with the same preparation starts
from that image with nothing left to prepare, and the first goes on as if nothing had happened.
Those waiting while the first prepares share its outcome; when the first fails, or the image is gone,
each prepares itself as before. An image that declares a `VOLUME` gets no task image: a commit
holds nothing under one. Nothing of the start script's or the command server's is in the
image (their files are in a tmpfs, `execd.RUNTIME`), and no command of the agent or the tests has
run in the container when it is committed.

The images are the run's (labelled like its containers, `engine.LABEL_TASK_IMAGE`): the run's end
removes them (`SandboxBackend.remove_left`), as do `factory clean` and a resumed run when the
process that made them is dead.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging

from factory.errors import EngineError, SandboxStartError
from factory.sandbox.backend import Preparation
from factory.sandbox.config import SandboxConfig
from factory.sandbox.docker import engine
from factory.sandbox.docker.sandbox import DockerSandbox
from factory.sandbox.docker.start_image import TASK_PREFIX
from factory.sandbox.docker.start_image import VERSION as START_VERSION

log = logging.getLogger(__name__)

VERSION = "v1"  # bump when what a task image holds changes
Made = tuple[str, str, str]  # (the task image's tag, the start commit in it, the id of the image it was made of)
_made: dict[tuple[str, str], asyncio.Future[Made | None]] = {}
"""(run id, key) -> the task image made of that preparation, or None when its making failed."""


async def sandbox_at(image: str, config: SandboxConfig, preparation: Preparation, **create: object) -> DockerSandbox:
    """A sandbox of `image` at the preparation's start state (`create`: `DockerSandbox.create`'s keywords)."""
    run_id = str(create.get("run_id", "adhoc"))
    key = await _key(image, config, preparation, str(create.get("workdir", "/testbed")))
    if key is None:
        return await _prepared(image, config, preparation, create)
    made = _made.get((run_id, key))
    if made is None or made.get_loop() is not asyncio.get_running_loop():
        future = _made[(run_id, key)] = asyncio.get_running_loop().create_future()
        return await _first(image, config, preparation, create, future, run_id, key)
    found = await asyncio.shield(made)
    if found is not None:
        tag, commit, made_of = found
        try:
            sandbox = await DockerSandbox.create(tag, config, **{**create, "wait": True})  # type: ignore[arg-type]
        except SandboxStartError as exc:  # removed since (a user, `factory clean --all`): prepare here
            log.info("task image %s is unusable (%s); preparing a sandbox of %s", tag, exc, image)
            if _made.get((run_id, key)) is made:
                del _made[(run_id, key)]  # the next sandbox makes it again
        else:
            sandbox.start_commit, sandbox.made_of = commit, made_of
            return sandbox
    return await _prepared(image, config, preparation, create)


def forget(run_id: str) -> None:
    """The run ended and its task images were removed: none of them is to be used again."""
    for key in [k for k in _made if k[0] == run_id]:
        del _made[key]


async def _key(image: str, config: SandboxConfig, preparation: Preparation, workdir: str) -> str | None:
    """What the start state is made of, hashed; None when it is not shared (or the image not here)."""
    rewrite = preparation.rewrite
    if not preparation.share or config.as_built or (rewrite is not None and not rewrite.key):
        return None
    try:
        image_id = await engine.call(engine.image_id, image)
        if await engine.call(_declares_volumes, image_id):
            return None
    except EngineError:
        return None  # creating the sandbox says what is wrong, in the words it has for that
    made_of = [VERSION, START_VERSION, image_id, workdir, config.user, preparation.start.model_dump_json(),
               sorted((preparation.files or {}).items()), rewrite and [rewrite.readback, rewrite.key]]
    return hashlib.sha256(json.dumps(made_of).encode()).hexdigest()[:24]


@functools.cache
def _declares_volumes(image_id: str) -> bool:
    """Whether the image declares a `VOLUME`: a commit holds nothing under one (the work dir or
    `/tmp` prepared there would be the image's own again in every container of the task image)."""
    return bool(engine.client().api.inspect_image(image_id)["Config"].get("Volumes"))


async def _prepared(image: str, config: SandboxConfig, preparation: Preparation, create: dict) -> DockerSandbox:
    sandbox = await DockerSandbox.create(image, config, **create)
    try:
        await sandbox.prepare(preparation.start, files=preparation.files, rewrite=preparation.rewrite)
    except BaseException:
        await sandbox.close()
        raise
    return sandbox


async def _first(image: str, config: SandboxConfig, preparation: Preparation, create: dict,
                 future: asyncio.Future[Made | None], run_id: str, key: str) -> DockerSandbox:
    """The first sandbox of a preparation: prepared here, then committed for the others."""
    found = None
    try:
        sandbox = await _prepared(image, config, preparation, create)
        try:
            found = await _commit(sandbox, run_id, key)
        except BaseException:  # cancelled while committing (a run interrupted): the container goes too
            await sandbox.close()
            raise
        return sandbox
    finally:  # however it ends (a failure, a cancel), those waiting go on
        future.set_result(found)
        if found is None:
            _made.pop((run_id, key), None)  # a later sandbox tries again


async def _commit(sandbox: DockerSandbox, run_id: str, key: str) -> Made | None:
    assert sandbox.start_commit is not None
    labels = {**engine.labels(run_id, "task-image"), engine.LABEL_TASK_IMAGE: key}
    try:
        # tagged with the run: another run's task image of the same preparation has another start
        # commit (its time), and must not take this one's name
        tag = engine.image_tag(run_id)
        await engine.made(sandbox.container.commit, repository=f"{TASK_PREFIX}{key}", tag=tag, pause=False,
                          changes=[f"LABEL {k}={json.dumps(v)}" for k, v in labels.items()], undo=engine.discard_image)
    except EngineError as exc:
        log.info("no task image of %s: %s", sandbox.container.short_id, exc)
        return None
    return f"{TASK_PREFIX}{key}:{tag}", sandbox.start_commit, sandbox.image_id
