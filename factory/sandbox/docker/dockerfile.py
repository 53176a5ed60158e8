"""Images built from a task's own Dockerfile (Harbor / Terminal-Bench tasks, `TerminalSpec.build`).

Built by the engine's builder with no network: a Dockerfile that starts from a factory image
(`FROM factory/python:3.11`) and copies or makes its files builds offline; one that downloads
fails here, named, rather than in the middle of a run. Images are labelled as the factory's.
"""

from __future__ import annotations

import json

from docker.errors import APIError, BuildError

from factory.errors import SandboxError
from factory.records import Task
from factory.sandbox.docker import engine
from factory.sandbox.docker.images import image_exists


def built_tasks(tasks: list[Task]) -> dict[str, str]:
    """image -> the folder it is built from, for the tasks whose image is built from a Dockerfile."""
    return {t.image: t.terminal.build for t in tasks if t.terminal is not None and t.terminal.build}


def build_dockerfile_image(image: str, folder: str) -> None:
    try:
        engine.client().images.build(path=folder, tag=image, network_mode="none", rm=True, forcerm=True,
                                     labels=engine.labels("images", image))
    except BuildError as exc:
        said = "".join(str(part.get("stream") or part.get("error") or json.dumps(part)) for part in exc.build_log)
        raise SandboxError(f"building {image} from {folder}/Dockerfile failed (offline: no network in the build): "
                           f"{exc.msg}\n{said[-1500:]}") from exc
    except APIError as exc:
        raise SandboxError(f"building {image} from {folder}/Dockerfile: {exc}") from exc


def ensure_dockerfile_images(tasks: list[Task], *, rebuild: bool = False) -> list[tuple[str, str]]:
    """Build the missing Dockerfile images of `tasks`; returns (image, built|present)."""
    results = []
    for image, folder in built_tasks(tasks).items():
        if image_exists(image) and not rebuild:
            results.append((image, "present"))
            continue
        build_dockerfile_image(image, folder)
        results.append((image, "built"))
    return results
