"""`lock`: the repo made root's and read-only for the tests, changing only what is not so already.

On overlayfs a chown or chmod copies its file up into the container's layer; `chown -R` of a
repo that is root's already copies every file of it, in every verification. Here a tree in the
image's layer, mostly root's and read-only already, with a few files that are not and a link to
a file outside it: after `lock` all are root's and not group- or other-writable, the link's
target is untouched, and the files that were right already were never copied up (the container's own
layer holds only the others).
"""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path

import docker
import pytest

from factory.verify.frameworks.base import lock
from tests.conftest import BASE_IMAGE, SESSION, SESSION_LABEL

pytestmark = pytest.mark.docker

TREE = "/srv/repo"
MAKE = (f"mkdir -p {TREE}/pkg && for i in 1 2 3 4 5; do echo x > {TREE}/pkg/f$i.py; done && chmod -R go-w {TREE} && "
        f"echo secret > /srv/outside && chmod 666 /srv/outside && ln -s /srv/outside {TREE}/link")
SKEW = (f"chown 1000:1000 {TREE}/pkg/f1.py && chown 0:1000 {TREE}/pkg/f2.py && chmod g+w {TREE}/pkg/f3.py && "
        f"chmod o+w {TREE}/pkg && chown -h 1000:1000 {TREE}/link")


@pytest.fixture(scope="module")
def image(docker_client) -> str:
    """The tree in an image layer of its own (committed), as a repo is in a task's image."""
    labels = {SESSION_LABEL: SESSION, "factory.run": "test-lock"}
    maker = docker_client.containers.run(BASE_IMAGE, ["sh", "-c", MAKE], detach=True, labels=labels, network_mode="none")
    try:
        assert maker.wait()["StatusCode"] == 0
        tag = f"factory-test/lock:{uuid.uuid4().hex[:8]}"
        maker.commit(*tag.split(":"))
    finally:
        maker.remove(force=True)
    yield tag
    with contextlib.suppress(docker.errors.DockerException):
        docker_client.images.remove(tag, force=True)


def copied_up(container) -> set[str]:
    """The paths in the container's own layer (the engine's list of changes is read off the same
    directory, but comes back empty after some chowns on this engine version)."""
    container.reload()
    upper = Path(container.attrs["GraphDriver"]["Data"]["UpperDir"])
    return {"/" + str(p.relative_to(upper)) for p in upper.rglob("*")}


def test_lock_changes_only_what_is_not_root_owned_and_read_only(docker_client, image):
    labels = {SESSION_LABEL: SESSION, "factory.run": "test-lock"}
    container = docker_client.containers.run(image, ["sleep", "600"], detach=True, labels=labels, network_mode="none")
    try:
        assert container.exec_run(["sh", "-c", SKEW]).exit_code == 0
        skewed = copied_up(container)
        locked = container.exec_run(["sh", "-c", "\n".join(["set -e", *lock(TREE)])])
        assert locked.exit_code == 0, locked.output
        listed = container.exec_run(["sh", "-c", f"find {TREE} /srv/outside -printf '%p %U:%G %m\\n' | sort"]).output.decode()
        state = dict(line.split(" ", 1) for line in listed.splitlines())
        for i in range(1, 6):
            assert state[f"{TREE}/pkg/f{i}.py"] == "0:0 644"
        assert state[f"{TREE}/pkg"] == "0:0 755"
        assert state[f"{TREE}/link"].startswith("0:0 ")  # the link itself
        assert state["/srv/outside"] == "0:0 666"  # its target: not made read-only through the link
        changed = copied_up(container)
        untouched = {f"{TREE}/pkg/f{i}.py" for i in (4, 5)}
        assert not untouched & changed, f"files already root's and read-only were copied up: {untouched & changed}"
        assert changed == skewed, changed ^ skewed  # nothing beyond what SKEW had changed
    finally:
        container.remove(force=True)
