"""Start images: the start state made from them is the one git makes of the patched repo, and
nothing of the clean sources (the fix) or of the image's history reaches the agent."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from factory.records import StartState
from factory.sandbox.config import SandboxConfig
from factory.sandbox.docker import DockerSandbox, engine
from factory.sandbox.docker.start_image import IMAGE_GIT, LABEL_OF, PREFIX, REPO_GIT
from factory.sandbox.git import ATTRIBUTES, GIT_DIR
from tests.conftest import BASE_IMAGE
from tests.sandbox.conftest import DEMO

pytestmark = pytest.mark.docker


def host_git(folder: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", "-C", str(folder), "-c", "core.autocrlf=false", *args], input=stdin,
                          capture_output=True, text=True, check=True).stdout.strip()


def tree_git_makes(task, folder: Path) -> str:
    """The tree of the task's start state, made on the host from the task set's sources."""
    shutil.copytree(DEMO / "repos" / task.repo.split("/")[-1], folder)
    host_git(folder, "init", "-q")
    (folder / ".git/info").mkdir(exist_ok=True)
    (folder / ".git/info/attributes").write_text(ATTRIBUTES)
    host_git(folder, "apply", "-", stdin=task.start.bug_patch)
    for path in task.start.hide_paths:
        shutil.rmtree(folder / path) if (folder / path).is_dir() else (folder / path).unlink()
    host_git(folder, "add", "-A", "--", ".", ":(exclude,glob)**/__pycache__/**", ":(exclude,glob)**/*.py[cod]")
    return host_git(folder, "write-tree")


def clean_blobs(task) -> dict[str, str]:
    """Blob ids of the clean sources of the files the start state changes or hides: the fix and the hidden tests."""
    repo = DEMO / "repos" / task.repo.split("/")[-1]
    changed = [line[6:] for line in task.start.bug_patch.splitlines() if line.startswith("--- a/")]
    paths = [*changed, *(p for p in task.start.hide_paths if (repo / p).is_file())]
    return {p: host_git(repo, "hash-object", "--no-filters", str(repo / p)) for p in paths}


@pytest.mark.parametrize("user", ["agent", "root"])
async def test_the_start_state_is_the_tree_git_makes_of_the_patched_repo(task, user, tmp_path):
    async with await DockerSandbox.create(task.image, SandboxConfig(user=user), run_id="test-start-image") as sb:
        assert sb.on_start_image
        await sb.prepare(task.start)
        tree = await sb.exec("git rev-parse HEAD^{tree} && git status --porcelain | wc -l")
        assert tree.output.split() == [tree_git_makes(task, tmp_path / "repo"), "0"]
        owners = await sb.exec("find . -path ./.git -prune -o ! -user $(id -u) -print | head -3")
        assert owners.output == ""  # the agent owns every file of its repo, patched ones included


@pytest.mark.parametrize("user", ["agent", "root"])
async def test_nothing_of_the_clean_sources_reaches_the_agent(task, user):
    blobs = clean_blobs(task)
    assert len(blobs) >= 2
    async with await DockerSandbox.create(task.image, SandboxConfig(user=user), run_id="test-start-image") as sb:
        await sb.prepare(task.start)
        # every object the agent's git (and, for a root agent, the factory's) can read, by id
        listed = await sb.exec(f"git cat-file --batch-all-objects --batch-check='%(objectname)'; "
                               f"ls -d {IMAGE_GIT} {REPO_GIT} 2>&1; "
                               f"find / -xdev \\( -name '*.pack' -o -name '*.idx' \\) -print 2>/dev/null", user="root")
        assert not set(blobs.values()) & set(listed.output.split()), blobs
        assert f"{IMAGE_GIT}': No such file" in listed.output and f"{REPO_GIT}': No such file" in listed.output
        packs = {p.rsplit("/objects/", 1)[0] for p in listed.output.split() if p.endswith(".pack")}
        assert packs <= {"/testbed/.git", GIT_DIR}, packs
        of_factory = await sb.exec(f"git --git-dir={GIT_DIR} cat-file --batch-all-objects --batch-check='%(objectname)'",
                                   user="root")
        assert of_factory.exit_code == 0 and not set(blobs.values()) & set(of_factory.output.split())


async def test_one_start_image_per_image_and_user_made_once(task, docker_client):
    tags = set()
    for _ in range(2):
        async with await DockerSandbox.create(task.image, SandboxConfig(), run_id="test-start-image") as sb:
            tags.add(docker_client.api.inspect_container(sb.container.id)["Config"]["Image"])
    assert len(tags) == 1 and next(iter(tags)).startswith(PREFIX)
    made = docker_client.images.get(next(iter(tags)))
    of = docker_client.images.get(task.image).id
    assert made.labels[LABEL_OF] == of and made.labels[engine.LABEL] == ""  # no owner for `factory clean`


@pytest.fixture(scope="module")
def history_image(docker_client) -> tuple[str, str, str]:
    """A SWE-bench-like image: a repo with history at /testbed, HEAD a commit past the task's base."""
    container = docker_client.containers.run(BASE_IMAGE, ["sleep", "600"], detach=True, network_mode="none",
                                             labels={"factory": "1", "factory.run": "test-start-image"})
    g = "git -c user.name=t -c user.email=t@t"
    script = (f"set -e; mkdir -p /testbed && cd /testbed && git init -q && echo v1 > a.py && {g} add -A && "
              f"{g} commit -qm one && git rev-parse HEAD && echo v2-the-fix > a.py && echo new > b.py && "
              f"{g} add -A && {g} commit -qm two && git rev-parse HEAD:a.py")
    try:
        code, out = container.exec_run(["sh", "-c", script])
        assert code == 0, out
        base, later_blob = out.decode().split()
        tag = f"history-{uuid.uuid4().hex[:8]}"
        container.commit("factory-test/start-image", tag)
    finally:
        container.remove(force=True)
    yield f"factory-test/start-image:{tag}", base, later_blob
    of = docker_client.images.get(f"factory-test/start-image:{tag}").id
    for made in docker_client.images.list(filters={"label": f"{LABEL_OF}={of}"}):
        docker_client.images.remove(made.id, force=True)
    docker_client.images.remove(f"factory-test/start-image:{tag}")


@pytest.mark.parametrize("user", ["agent", "root"])
async def test_a_task_at_an_earlier_base_commit_starts_there_with_no_history(history_image, user):
    image, base, later_blob = history_image
    async with await DockerSandbox.create(image, SandboxConfig(user=user), run_id="test-start-image") as sb:
        assert sb.on_start_image
        await sb.prepare(StartState(base_commit=base))
        seen = await sb.exec(f"cat a.py; ls; git log --oneline | wc -l; git cat-file -e {later_blob} || echo gone",
                             user="root")
        assert seen.output.split() == ["v1", "a.py", "1", "gone"], seen.output


async def test_a_start_image_removed_since_it_was_made_is_made_again(history_image, docker_client):
    image = history_image[0]
    async with await DockerSandbox.create(image, SandboxConfig(), run_id="test-start-image") as sb:
        made = docker_client.api.inspect_container(sb.container.id)["Config"]["Image"]
        first = sb.image_id
    docker_client.images.remove(made, force=True)  # `docker rmi`, or another run's image_cache_gb
    async with await DockerSandbox.create(image, SandboxConfig(), run_id="test-start-image") as sb:
        assert sb.on_start_image and docker_client.api.inspect_container(sb.container.id)["Config"]["Image"] == made
        # the image made again under the same name has an id of its own, and the sandbox says that one
        assert sb.image_id == docker_client.images.get(made).id != first
        await sb.prepare(StartState())
        assert (await sb.exec("cat a.py")).output.strip() == "v2-the-fix"
