"""Sandbox backends by name (`sandbox.backend`): where the containers live.

    docker   a Docker engine (factory/sandbox/docker/), this machine's or DOCKER_HOST's
    podman   rootless Podman's Docker-compatible socket (factory/sandbox/podman/, `make podman`)

What a backend provides is `factory.protocols.SandboxBackend` (and the `Sandbox` it makes);
docs/sandbox.md says what each part must guarantee. The core asks this registry for a backend
by name and never imports one: a backend's module, and the client library it talks through
(docker-py), load only when a backend of that name is first asked for. A new backend is its
package, with a `BACKEND` object, and one `BACKENDS.add` below.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from factory.registry import Registry

if TYPE_CHECKING:
    from factory.protocols import SandboxBackend
    from factory.records import StartState

DEFAULT_BACKEND = "docker"
DIFF_LIMIT = 256 * 2**20  # a diff is never cut: past this the attempt's diff is an error


@dataclass(frozen=True)
class Rewrite:
    """Files of the start state rewritten on the host before it is committed (`Sandbox.prepare`)."""

    readback: str
    """Root shell, in the work tree at the start state: prints what `files` reads."""
    files: Callable[[str], dict[str, str]]
    """What `readback` printed -> path (relative to the work tree) -> its new text."""
    key: str = ""
    """All that `files` depends on besides what `readback` printed: two rewrites with the same
    readback and key make the same files. Empty: unknown, so no sandbox shares its start state."""


@dataclass(frozen=True)
class Preparation:
    """What `Sandbox.prepare` is asked, given to `SandboxBackend.create` so that the sandbox comes
    back at that start state."""

    start: StartState
    files: Mapping[str, str] | None = None
    rewrite: Rewrite | None = None
    share: bool = False
    """The backend may reach this start state once per run and start every later sandbox with the
    same preparation from it (Docker: an image of it, `factory.sandbox.docker.task_image`). Only
    for callers whose run ends in `SandboxBackend.remove_left`, which removes those images."""


def _module(name: str) -> Callable[[], SandboxBackend]:
    """A backend whose package `name` is imported when first asked for (its `BACKEND`)."""
    return lambda: importlib.import_module(name).BACKEND


BACKENDS: Registry[Callable[[], SandboxBackend]] = Registry("sandbox backend")
BACKENDS.add("docker", _module("factory.sandbox.docker"))
BACKENDS.add("podman", _module("factory.sandbox.podman"))


@functools.cache
def sandbox_backend(name: str = DEFAULT_BACKEND) -> SandboxBackend:
    """The backend registered as `name`; an unknown one is a `UsageError` listing the valid names."""
    return BACKENDS.get(name)()
