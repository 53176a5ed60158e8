"""Task images: the sandboxes of one shared preparation start from one image of its start state,
at the very state a sandbox prepared on its own reaches, with nothing of the sandbox that made it;
the run's end removes them, and `factory clean` those of dead processes."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from factory.errors import SandboxError
from factory.records import StartState
from factory.sandbox.backend import Preparation, sandbox_backend
from factory.sandbox.config import SandboxConfig
from factory.sandbox.docker import engine
from factory.sandbox.docker.execd import RUNTIME
from factory.sandbox.docker.start_image import LABEL_OF, TASK_PREFIX
from tests.sandbox.test_start_image import clean_blobs, tree_git_makes

pytestmark = pytest.mark.docker
ROOT = Path(__file__).parents[2]


def task_images(docker_client, run_id: str) -> list:
    return docker_client.images.list(filters={"label": [engine.LABEL_TASK_IMAGE, f"{engine.LABEL_RUN}={run_id}"]})


def image_of(docker_client, sandbox) -> str:
    return docker_client.api.inspect_container(sandbox.container.id)["Config"]["Image"]


@pytest.mark.parametrize("user", ["agent", "root"])
async def test_sandboxes_of_one_preparation_start_from_one_image_at_the_state_prepared(task, user, docker_client, tmp_path):
    backend, run_id = sandbox_backend("docker"), f"test-task-image-{uuid.uuid4().hex[:8]}"
    config, shared = SandboxConfig(user=user), Preparation(task.start, share=True)
    create = {"workdir": task.workdir, "run_id": run_id}
    try:
        # two at once (the second waits for the first's making), one after, and one not shared
        sandboxes = [*await asyncio.gather(*(backend.create(task.image, config, **create, prepare=shared)
                                             for _ in range(2))),
                     await backend.create(task.image, config, **create, prepare=shared),
                     await backend.create(task.image, config, **create, prepare=Preparation(task.start))]
        made = task_images(docker_client, run_id)
        assert len(made) == 1, made
        images = [image_of(docker_client, sb) for sb in sandboxes]
        assert sum(i.startswith(TASK_PREFIX) for i in images) == 2 and not images[-1].startswith(TASK_PREFIX), images
        tree, blobs = tree_git_makes(task, tmp_path / "repo"), set(clean_blobs(task).values())
        hidden = " ".join(task.start.hide_paths)
        assert len({sb.start_commit for sb in sandboxes[:3]}) == 1
        for sb in sandboxes:
            seen = await sb.exec(f"git rev-parse HEAD HEAD^{{tree}} && git status --porcelain | grep -v egg-info | wc -l; "
                                 f"ls -d {hidden} 2>/dev/null | wc -l; "
                                 "find . -path ./.git -prune -o ! -user $(id -u) -print | wc -l; "
                                 "git cat-file --batch-all-objects --batch-check='%(objectname)'")
            head, head_tree, dirty, shown, not_owned, *objects = seen.output.split()
            assert [head, head_tree, dirty, shown, not_owned] == [sb.start_commit, tree, "0", "0", "0"], seen.output
            assert not blobs & set(objects)  # the fix and the hidden tests: not in the agent's git
            # its own ready line, and the work it does is its own
            ready = await sb.exec(f"cat {RUNTIME}/start", user="root")
            assert ready.output.split()[:3] == ["ready", sb.keepalive_pid, user]
            await sb.exec("echo '# mine' >> README.md")
            assert (await sb.diff()).count("+# mine") == 1
        # nothing of the sandbox it was made of is in the image: no ready line, no server's pid
        left = subprocess.run(["docker", "run", "--rm", "--network", "none", "--entrypoint", "sh", made[0].id, "-c",
                               f"ls -A {RUNTIME} 2>/dev/null | wc -l; ls /run"], capture_output=True, text=True)
        assert left.returncode == 0 and left.stdout.split()[0] == "0", left
        for sb in sandboxes:
            await sb.close()
    finally:
        await backend.remove_left(run_id)
    assert task_images(docker_client, run_id) == []


async def test_a_preparation_that_fails_fails_each_sandbox_and_leaves_no_image(task, docker_client):
    backend, run_id = sandbox_backend("docker"), f"test-task-image-{uuid.uuid4().hex[:8]}"
    broken = Preparation(StartState(bug_patch="--- a/none.py\n+++ b/none.py\n@@ -1 +1 @@\n-x\n+y\n"), share=True)
    try:
        made = await asyncio.gather(*(backend.create(task.image, SandboxConfig(), workdir=task.workdir, run_id=run_id,
                                                     prepare=broken) for _ in range(2)), return_exceptions=True)
        assert all(isinstance(m, SandboxError) for m in made), made
        assert task_images(docker_client, run_id) == []
        assert docker_client.api.containers(all=True, filters={"label": f"{engine.LABEL_RUN}={run_id}"}) == []
    finally:
        await backend.remove_left(run_id)


async def test_the_runs_end_removes_its_task_images_and_clean_those_of_dead_processes(task, docker_client):
    backend, run_id = sandbox_backend("docker"), f"test-task-image-{uuid.uuid4().hex[:8]}"
    shared = Preparation(task.start, share=True)
    async with await backend.create(task.image, SandboxConfig(), workdir=task.workdir, run_id=run_id, prepare=shared):
        pass
    assert len(task_images(docker_client, run_id)) == 1
    await backend.remove_left(run_id)
    assert task_images(docker_client, run_id) == []
    # the run goes on in this process: its next sandbox makes the image again rather than miss it
    async with await backend.create(task.image, SandboxConfig(), workdir=task.workdir, run_id=run_id, prepare=shared):
        assert len(task_images(docker_client, run_id)) == 1
    # removed behind the run's back: the next sandbox prepares itself, the one after makes it again
    docker_client.images.remove(task_images(docker_client, run_id)[0].id, force=True)
    for made in (0, 1):
        async with await backend.create(task.image, SandboxConfig(), workdir=task.workdir, run_id=run_id,
                                        prepare=shared) as sb:
            assert sb.start_commit and len(task_images(docker_client, run_id)) == made
    await backend.remove_left(run_id)

    # a process killed mid-run leaves its task image (and container); `factory clean` removes both
    dead = f"test-task-image-{uuid.uuid4().hex[:8]}"
    script = (f"import asyncio, os; from factory.sandbox.backend import Preparation, sandbox_backend; "
              f"from factory.sandbox.config import SandboxConfig; from factory.records import StartState; "
              f"asyncio.run(sandbox_backend('docker').create({task.image!r}, SandboxConfig(), workdir={task.workdir!r}, "
              f"run_id={dead!r}, prepare=Preparation(StartState.model_validate_json({task.start.model_dump_json()!r}), "
              f"share=True))); os._exit(0)")
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True, timeout=300)
    assert len(task_images(docker_client, dead)) == 1
    cleaned = subprocess.run([str(Path(sys.executable).parent / "factory"), "clean"], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
    assert cleaned.returncode == 0, cleaned.stderr
    assert task_images(docker_client, dead) == []
    assert docker_client.api.containers(all=True, filters={"label": f"{engine.LABEL_RUN}={dead}"}) == []


@pytest.fixture(scope="module")
def volume_image(task, docker_client):
    """The task's image with its work dir declared a `VOLUME`: a commit would hold nothing under it."""
    tag = f"factory-test/volume-workdir:{uuid.uuid4().hex[:8]}"
    dockerfile = f"FROM {task.image}\nVOLUME {task.workdir}\nLABEL factory.fixture=volume-workdir\n"
    docker_client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True, network_mode="none")
    yield tag
    for made in docker_client.images.list(filters={"label": f"{LABEL_OF}={docker_client.images.get(tag).id}"}):
        docker_client.images.remove(made.id, force=True)
    docker_client.images.remove(tag, force=True)


async def test_an_image_with_a_volume_gets_no_task_image_and_leaves_no_volume(task, volume_image, docker_client):
    backend, run_id = sandbox_backend("docker"), f"test-task-image-{uuid.uuid4().hex[:8]}"
    shared = Preparation(task.start, share=True)
    try:
        for _ in range(2):
            sb = await backend.create(volume_image, SandboxConfig(), workdir=task.workdir, run_id=run_id, prepare=shared)
            volumes = [m["Name"] for m in docker_client.api.inspect_container(sb.container.id)["Mounts"]
                       if m["Type"] == "volume"]
            assert volumes and not image_of(docker_client, sb).startswith(TASK_PREFIX)
            seen = await sb.exec(f"git log --oneline | wc -l; ls -d {' '.join(task.start.hide_paths)} 2>/dev/null | wc -l")
            assert seen.output.split() == ["1", "0"], seen.output  # the start state, prepared here
            await sb.close()
            assert not [v for v in volumes if docker_client.api.volumes(filters={"name": v})["Volumes"]]
        assert task_images(docker_client, run_id) == []
    finally:
        await backend.remove_left(run_id)
