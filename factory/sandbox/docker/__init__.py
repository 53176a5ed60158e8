"""The Docker backend: sandboxes are containers of a Docker engine, talked to through docker-py.

    sandbox.py      DockerSandbox: one container, its start script, exec, files, diff, crashes
    execd.py        the command server inside it (commands without an engine call each)
    start_image.py  start images: the clean repo of an image, prepared once
    task_image.py   task images: a task's start state, prepared once per run
    images.py       image presence, offline builds, pulls and their removal
    dockerfile.py   images of a task's own Dockerfile (Harbor), built offline
    frozen.py       an agent's final state kept as an image (its services too), and containers of it for the verifier
    engine.py       the client, its thread pool, labels, cleanup by label

Only this package imports docker-py; the core reaches it through `factory.sandbox.backend`.
"""

from __future__ import annotations

from collections.abc import Callable

from factory.records import Task
from factory.sandbox.backend import Preparation
from factory.sandbox.config import SandboxConfig
from factory.sandbox.docker import dockerfile, engine, frozen, images, task_image
from factory.sandbox.docker.sandbox import DockerSandbox
from factory.sandbox.images import RepoImage
from factory.sandbox.services import Service

__all__ = ["BACKEND", "DockerBackend", "DockerSandbox"]


class DockerBackend:
    """`factory.protocols.SandboxBackend` on the Docker engine of DOCKER_HOST (or this machine's)."""

    name = "docker"
    url: str | None = None
    """The engine's socket; None: DOCKER_HOST or the default. Another engine that speaks the
    Docker API (factory.sandbox.podman) is this class with its own socket."""

    def _engine(self) -> None:
        engine.connect(self.url)

    async def create(self, image: str, config: SandboxConfig, *, workdir: str = "/testbed", run_id: str = "adhoc",
                     attempt_id: str | None = None, network: str | None = None, memory: str | None = None,
                     wait: bool = True, prepare: Preparation | None = None) -> DockerSandbox:
        self._engine()
        create = {"workdir": workdir, "run_id": run_id, "attempt_id": attempt_id, "network": network, "memory": memory,
                  "wait": wait}
        if prepare is not None:
            return await task_image.sandbox_at(image, config, prepare, **create)
        return await DockerSandbox.create(image, config, **create)

    def image_exists(self, image: str) -> bool:
        self._engine()
        return images.image_exists(image)

    def build_image(self, plan: RepoImage, base: str, *, root_only: bool = False) -> None:
        self._engine()
        images.build_image(plan, base, root_only=root_only)

    async def pull(self, image: str, note: Callable[[str], None]) -> int:
        self._engine()
        return await engine.call(images.pull_once, image, note)

    async def remove_image(self, image: str) -> None:
        self._engine()
        await images.remove_pulled(image)

    def remove_containers(self, *, run_id: str | None = None, everything: bool = False) -> int:
        self._engine()
        return engine.remove_containers(run_id=run_id, everything=everything)

    def reap_run(self, run_id: str) -> int:
        self._engine()
        return engine.reap_run(run_id)

    async def remove_left(self, run_id: str) -> int:
        self._engine()
        task_image.forget(run_id)
        return await engine.remove_left(run_id)

    def build_dockerfile_images(self, tasks: list[Task], *, rebuild: bool = False) -> list[tuple[str, str]]:
        self._engine()
        return dockerfile.ensure_dockerfile_images(tasks, rebuild=rebuild)

    async def freeze(self, sandbox: DockerSandbox, run_id: str, attempt_id: str) -> str:
        self._engine()
        return await frozen.freeze(sandbox, run_id, attempt_id)

    async def state_changes(self, state: str) -> list[tuple[str, str]]:
        self._engine()
        return await frozen.changes_of(state)

    async def state_services(self, state: str) -> list[Service]:
        self._engine()
        return await frozen.services_of(state)

    async def open_services(self, state: str, *, run_id: str, attempt_id: str, memory: str,
                            cpus: float) -> frozen.ServicesRun:
        self._engine()
        return await frozen.ServicesRun.create(state, run_id=run_id, attempt_id=attempt_id, memory=memory, cpus=cpus)

    async def open_state(self, state: str, *, run_id: str, attempt_id: str, memory: str, cpus: float,
                         beside: frozen.ServicesRun | None = None) -> frozen.StateRun:
        self._engine()
        return await frozen.StateRun.create(state, run_id=run_id, attempt_id=attempt_id, memory=memory, cpus=cpus,
                                            beside=beside)

    async def remove_state(self, state: str) -> None:
        self._engine()
        await frozen.remove_state(state)


BACKEND = DockerBackend()
