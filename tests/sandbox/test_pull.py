"""Images that are not on the engine are pulled from the registry in their name: a real registry
server (Debian's `docker-registry`) on loopback, the real engine pulling from it."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import docker
import pytest

from factory.config import load_pipeline
from factory.run.progress import QuietProgress
from factory.run.runner import run_pipeline
from factory.sandbox.config import SandboxConfig
from factory.sandbox.docker import DockerSandbox
from factory.sandbox.docker.start_image import LABEL_OF
from factory.sandbox.images import ensure_images
from factory.sandbox.pull import ImageUnavailable, Puller, is_transient
from factory.tasks import load_tasks
from factory.tasks.config import TasksConfig
from tests.conftest import BASE_IMAGE
from tests.installed import require
from tests.sandbox.registry import REGISTRY, RateLimited, registry_server

pytestmark = pytest.mark.docker
DEMO = Path(__file__).parents[2] / "pipelines/tasksets/demo"


@pytest.fixture(scope="module")
def registry(tmp_path_factory, docker_client) -> str:
    require(REGISTRY, "registry")
    with registry_server(tmp_path_factory.mktemp("registry")) as address:
        yield address


def publish(client: docker.DockerClient, registry: str, source: str, name: str) -> str:
    """Push `source` to the registry under a new name and remove that name here: the engine
    keeps `source` (and its layers), but the new name is on the registry alone."""
    ref = f"{registry}/factory-test/{name}:{uuid.uuid4().hex[:8]}"
    repository, tag = ref.rsplit(":", 1)
    client.images.get(source).tag(repository, tag)
    for event in client.api.push(repository, tag=tag, stream=True, decode=True):
        assert "error" not in event, event
    client.images.remove(ref)
    return ref


def local(client: docker.DockerClient, ref: str) -> bool:
    try:
        client.images.get(ref)
    except docker.errors.ImageNotFound:
        return False
    return True


def remove(client: docker.DockerClient, ref: str) -> None:
    if local(client, ref):
        client.images.remove(ref)


async def test_a_missing_image_is_pulled_and_a_sandbox_starts_from_it(docker_client, registry):
    ref = publish(docker_client, registry, BASE_IMAGE, "pulled")
    notes: list[str] = []
    try:
        assert not local(docker_client, ref)
        await Puller(note=notes.append).ensure(ref)
        assert local(docker_client, ref)
        async with await DockerSandbox.create(ref, SandboxConfig(), workdir="/", run_id="test-pull") as sandbox:
            assert (await sandbox.exec("python3 -c 'print(6 * 7)'")).output.strip() == "42"
        assert notes[0] == f"pulling {ref}" and notes[-1].startswith(f"pulled {ref} (")
    finally:
        remove(docker_client, ref)


async def test_a_registry_that_answers_429_first_is_waited_out(docker_client, registry):
    ref = publish(docker_client, registry, BASE_IMAGE, "limited")
    notes: list[str] = []
    try:
        with RateLimited(registry, refusals=2) as front:
            limited_ref = ref.replace(registry, front.address)
            await Puller(backoff_seconds=0.05, note=notes.append).ensure(limited_ref)
            assert front.refused == 2
            assert local(docker_client, limited_ref)
            # the engine may ask twice per pull (HEAD, then GET): each refusal it passed on is a try of ours
            retried = [n for n in notes if "trying again" in n]
            assert 1 <= len(retried) <= 2 and all("toomanyrequests" in n.lower() for n in retried)
            remove(docker_client, limited_ref)
    finally:
        remove(docker_client, ref)


async def test_a_rate_limit_that_outlasts_the_tries_names_the_image_in_one_line(docker_client, registry):
    ref = publish(docker_client, registry, BASE_IMAGE, "always-limited")
    try:
        with RateLimited(registry, refusals=100) as front:
            limited_ref = ref.replace(registry, front.address)
            with pytest.raises(ImageUnavailable) as caught:
                await Puller(attempts=3, backoff_seconds=0.05).ensure(limited_ref)
        message = str(caught.value)
        assert limited_ref in message and "after 3 tries" in message and "\n" not in message
        assert front.refused >= 3
    finally:
        remove(docker_client, ref)


async def test_an_image_no_registry_holds_fails_at_once_and_stays_failed(docker_client, registry):
    ref = f"{registry}/factory-test/absent:{uuid.uuid4().hex[:8]}"
    puller = Puller(backoff_seconds=5.0)
    with pytest.raises(ImageUnavailable) as caught:
        await puller.ensure(ref)
    # `manifest unknown` is not retried: the message says no "after N tries"
    assert ref in str(caught.value) and "tries" not in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(ImageUnavailable):  # the run's next need of it fails the same, without a pull
        await puller.ensure(ref)
    assert len(puller.pulls) == 1


async def test_concurrent_needs_of_one_image_share_one_pull(docker_client, registry):
    ref = publish(docker_client, registry, BASE_IMAGE, "shared")
    notes: list[str] = []
    try:
        puller = Puller(note=notes.append)
        await asyncio.gather(*(puller.ensure(ref) for _ in range(5)))
        assert sum(n.startswith("pulling ") for n in notes) == 1
    finally:
        remove(docker_client, ref)


def tasks_on(path: Path, image: str, count: int) -> Path:
    """The first `count` demo tasks, with `image` as their image and no local sources for it."""
    rows = [json.loads(line) for line in (DEMO / "tasks.jsonl").read_text().splitlines()[:count]]
    path.write_text("".join(json.dumps({**row, "image_name": image}) + "\n" for row in rows))
    return path


def pipeline(tmp_path: Path, tasks: Path) -> Path:
    path = tmp_path / "pull.yaml"
    path.write_text(f"""\
name: pull
tasks: {{source: {tasks}}}
teachers:
  - {{kind: scripted, model: scripted-test, seed: 1,
     profile: {{solve: 1.0, wrong_fix: 0, loop: 0, format_error: 0, give_up: 0}}}}
sandbox: {{memory: 512m, image_cache_gb: 0.001}}
sampling: {{attempts_per_task: 1, max_in_flight: 2}}
verifier: {{timeout: 120}}
output: {{dir: {tmp_path / "runs"}}}
""")
    return path


async def test_attempts_that_lacked_their_image_are_redone_on_resume_and_the_cache_is_trimmed(
        tmp_path, docker_client, registry):
    demo = load_tasks(TasksConfig(source=str(DEMO), limit=1)).tasks
    ensure_images(demo, DEMO)
    source = demo[0].image
    ref = f"{registry}/factory-test/demo:{uuid.uuid4().hex[:8]}"  # on no registry yet
    path = pipeline(tmp_path, tasks_on(tmp_path / "tasks.jsonl", ref, 2))

    first = await run_pipeline(load_pipeline(path), run_id="r", progress=QuietProgress(), command="test")
    attempts = first.store.attempts()
    assert len(attempts) == 2 and all(a.error_class == "sandbox_error" for a in attempts)
    assert all(ref in a.trajectory.error and "could not be pulled" in a.trajectory.error for a in attempts)

    # the image is pushed to its registry, so the resume can have it: an image of its own (the
    # demo's layers under one more), whose only name here would be the one the run pulls
    repository, tag = ref.rsplit(":", 1)
    builder = docker_client.containers.create(source, ["true"], labels={"factory": "1", "factory.run": "test-pull"})
    try:
        pushed = builder.commit(repository, tag, changes=['LABEL factory.test="own image"', 'LABEL factory=""'])
    finally:
        builder.remove(force=True)
    for event in docker_client.api.push(repository, tag=tag, stream=True, decode=True):
        assert "error" not in event, event
    docker_client.images.remove(ref)

    again = await run_pipeline(load_pipeline(path), run_id="r", progress=QuietProgress(), command="test")
    attempts = again.store.attempts()
    assert len(attempts) == 2 and all(a.error_class is None and a.verdict.resolved for a in attempts)
    # pulled by this run, needed by none of its tasks now, past image_cache_gb: removed; the image
    # it was pushed from (the same layers, under another name) was here before the run and stays
    assert not local(docker_client, ref)
    assert local(docker_client, source)
    # and the start images made of it went first: they would have kept its layers on disk
    assert not docker_client.images.list(filters={"label": f"{LABEL_OF}={pushed.id}"})


@pytest.mark.parametrize(("message", "transient"), [
    ("toomanyrequests: retry later", True),
    ("received unexpected HTTP status: 429 Too Many Requests", True),
    ("manifest for 127.0.0.1:54297/factory-test/absent:8c2943f1 not found: manifest unknown", False),
    ("manifest for r.example/a429b:1 not found: manifest unknown", False),
])
def test_only_a_rate_limit_or_a_passing_fault_is_transient(message, transient):
    assert is_transient(message) is transient
