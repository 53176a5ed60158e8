"""Copies of the hidden test files outside the repo are out of the test user's reach.

A forger that reads the original of a test file next to the file with its controls tells
the copies by a diff. Here the image itself carries such copies, as real images do (a
second checkout with its own git store, an installed copy with its bytecode), plus a file
of the same name that is no copy. The index of the image's files is made once per image:
the second verification on it must hide as much as the first.
"""

from __future__ import annotations

import pytest

from factory.records import TestSpec
from factory.sandbox.docker import engine
from factory.sandbox.docker.images import image_exists
from factory.verify.frameworks import FRAMEWORKS, TEST_UID
from factory.verify.frameworks.pytest import PytestFramework
from factory.verify.verifier import DockerVerifier
from tests.verify.conftest import TOY_IMAGE

pytestmark = pytest.mark.docker

IMAGE = "factory-test/toy-copies:v1"
SCATTER = (
    "mkdir -p /opt/installed /opt/decoy && cp /testbed/tests/test_core.py /opt/installed/ && "
    "python3 -m compileall -q /opt/installed && "
    "echo 'def test_clamp_high():\n    pass' > /opt/decoy/test_core.py && "
    "git init -q /opt/checkout && cp /testbed/tests/test_core.py /opt/checkout/ && "
    "git -C /opt/checkout -c user.name=t -c user.email=t@t add -A && "
    "git -C /opt/checkout -c user.name=t -c user.email=t@t commit -qm copy"
)
LOOK = ("for f in /opt/installed/test_core.py /opt/installed/__pycache__/*.pyc /opt/checkout/.git/objects/??/* "
        "/opt/checkout/test_core.py /opt/decoy/test_core.py; do "
        "if head -c1 \"$f\" >/dev/null 2>&1; then echo \"readable $f\"; else echo \"locked $f\"; fi; done")


@pytest.fixture(scope="module")
def image(toy_task) -> str:
    if not image_exists(IMAGE):
        client = engine.client()
        labels = engine.labels("images", IMAGE)
        container = client.containers.run(TOY_IMAGE, ["sleep", "600"], detach=True, network_mode="none", labels=labels)
        try:
            code, out = container.exec_run(["sh", "-c", SCATTER])
            assert code == 0, out
            container.commit(repository=IMAGE.split(":")[0], tag="v1", changes=[engine.blank_labels(labels)])
        finally:
            container.remove(force=True)
    return IMAGE


class Looker(PytestFramework):
    """The real pytest framework; after the tests it asks, as the test user, what it can read."""

    seen: dict[str, str] = {}

    async def _tests(self, trial):
        run = await super()._tests(trial)
        looked = await trial.sandbox.exec(LOOK, user=str(TEST_UID), workdir="/")
        Looker.seen = dict(reversed(line.split(" ", 1)) for line in looked.output.split("\n") if line)
        return run


FRAMEWORKS.add("pytest-looker", Looker)


async def test_copies_elsewhere_in_the_image_are_locked_and_others_are_not(image, toy_task, make_patch, verifier):
    looker = DockerVerifier(verifier.config)
    task = toy_task.model_copy(update={"image": image, "tests": TestSpec(framework="pytest-looker")})
    for _ in range(2):  # the second run uses the image's index made by the first
        verdict = await looker.verify(task, make_patch({}, fix=True))
        assert verdict.resolved, verdict
        seen = Looker.seen
        assert seen["/opt/installed/test_core.py"] == "locked"
        assert [state for path, state in seen.items() if path.endswith(".pyc")] == ["locked"]
        assert {state for path, state in seen.items() if "/objects/" in path} == {"locked"}
        assert seen["/opt/checkout/test_core.py"] == "locked"
        assert seen["/opt/decoy/test_core.py"] == "readable"
