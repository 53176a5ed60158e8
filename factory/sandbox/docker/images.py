"""Images on the Docker engine: presence, offline builds of repo images, pulls and their removal."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from docker.errors import APIError, DockerException, ImageNotFound
from docker.utils import parse_repository_tag

from factory.errors import EngineError, SandboxError, UsageError
from factory.sandbox.docker import engine
from factory.sandbox.docker.start_image import LABEL_OF
from factory.sandbox.images import BASE_IMAGE, RepoImage, _tar_of, install_script
from factory.sandbox.pull import PullFailed, is_transient

log = logging.getLogger(__name__)
REPORT_EVERY_SECONDS = 10.0


def image_exists(image: str) -> bool:
    try:
        engine.client().images.get(image)
    except ImageNotFound:
        return False
    except (DockerException, OSError) as exc:  # requests' errors are OSErrors
        raise EngineError(f"Docker engine: cannot look up image {image}: {exc}") from exc
    return True


def build_image(plan: RepoImage, base: str = BASE_IMAGE, *, root_only: bool = False) -> None:
    """Create a container from `base`, copy the repo in, run the install step, commit it as the image."""
    if not image_exists(base):
        raise UsageError(f"image {plan.image} starts from {base}, which is not on the engine: build it "
                         "first (`make lang-images`, or scripts/build-lang-image.sh LANG for one language)")
    client = engine.client()
    labels = engine.labels("images", plan.image)
    container = client.containers.create(base, ["sleep", "600"], network_mode="none", labels=labels)
    try:
        container.start()
        container.exec_run(["mkdir", "-p", "/testbed"])
        container.put_archive("/", _tar_of(plan.repo_dir))
        code, out = container.exec_run(["bash", "-c", install_script(plan, root_only=root_only)])
        if code != 0:
            raise SandboxError(f"install step for {plan.image} failed: {out.decode(errors='replace')[-1000:]}")
        repo, _, tag = plan.image.rpartition(":") if ":" in plan.image.split("/")[-1] else (plan.image, "", "latest")
        container.commit(repository=repo, tag=tag, pause=False,
                         changes=['WORKDIR /testbed', 'CMD ["/bin/bash"]', engine.blank_labels(labels)])
    finally:
        container.remove(force=True, v=True)


def pull_once(image: str, note: Callable[[str], None]) -> int:
    """One pull through the engine, reporting progress now and then; the image's size."""
    repository, tag = parse_repository_tag(image)
    api = engine.client().api
    layers: dict[str, tuple[int, int]] = {}  # layer id: (bytes done, bytes in all)
    reported = time.monotonic()
    try:
        for event in api.pull(repository, tag=tag or "latest", stream=True, decode=True):
            if "error" in event:
                message = event.get("error") or str(event.get("errorDetail"))
                raise PullFailed(message, is_transient(message))
            detail = event.get("progressDetail") or {}
            if event.get("id") and detail.get("total"):
                layers[event["id"]] = (detail.get("current", 0), detail["total"])
            if time.monotonic() - reported > REPORT_EVERY_SECONDS and layers:
                reported = time.monotonic()
                done, total = (sum(x) for x in zip(*layers.values(), strict=True))
                note(f"pulling {image}: {done / 1e6:.0f} of {total / 1e6:.0f} MB")
        return int(engine.client().images.get(image).attrs.get("Size") or 0)
    except APIError as exc:
        message = str(exc.explanation or exc)
        raise PullFailed(message, is_transient(message) or (exc.status_code or 0) >= 500) from None
    except OSError as exc:  # the connection to the engine, or the engine's to the registry, dropped
        raise PullFailed(f"{type(exc).__name__}: {exc}", transient=True) from None


async def remove_pulled(image: str) -> None:
    """Remove a pulled image's name. When it is the image's last name, the start images made of
    it go first (its children, which would keep its layers on disk), and before them the task
    images made of those (their children, whose label they inherit); one that a container uses
    stays, and so then does the image. Under another name the image stays, and so do they."""
    client = engine.client()
    found = await engine.call(client.images.get, image)
    if len(found.tags) <= 1:
        made = await engine.call(client.images.list, filters={"label": f"{LABEL_OF}={found.id}"})
        for child in sorted(made, key=lambda m: engine.LABEL_TASK_IMAGE not in (m.labels or {})):
            await engine.call(client.images.remove, child.id)
    await engine.call(client.images.remove, image)
