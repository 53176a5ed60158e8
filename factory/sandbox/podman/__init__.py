"""The Podman backend: sandboxes are containers of rootless Podman, run by an unprivileged user.

`make podman` (scripts/ensure-podman.sh) starts `podman system service` as that user on a
Docker-compatible socket; this backend is the Docker backend's code pointed at that socket
(docs/sandbox.md, "Podman (rootless)", says what differs and why that is all it takes). What it
adds is the check that the guarantees hold before the first container: rootless Podman on a
kernel that does not delegate cgroup controllers to the user accepts memory, pids and CPU limits
and silently drops them, so an engine that cannot apply them is refused here, in one line that
names what is missing.

Terminal tasks' services (`factory.sandbox.docker.frozen.ServicesRun`) take nothing more of the API
than an exec with a work dir and a `container:<id>` network mode, which Podman's compatible API has
too; that path is tested on Docker only. Freezing a final state commits with the engine's default
pause, which rootless Podman without a freezer cgroup refuses (docs/sandbox.md).

    FACTORY_PODMAN_SOCKET   the socket (default unix:///run/user/<uid>/podman/podman.sock, uid:
                            this process's, or FACTORY_PODMAN_USER's (default `factory`) as root)
    FACTORY_PODMAN_LIMITS   `unenforced`: run without cgroup limits where the kernel cannot give
                            them (cgroup v1), knowingly; never the default
"""

from __future__ import annotations

import functools
import os
import pwd

from factory.errors import SandboxError
from factory.sandbox.docker import DockerBackend, engine

__all__ = ["BACKEND", "PodmanBackend", "socket_url", "refusal"]

LIMITS = ("memory", "pids", "cpu")
"""The cgroup controllers a sandbox's limits need (`sandbox.memory`, `pids_limit`, `cpus`)."""
UNENFORCED = "unenforced"


def socket_url() -> str:
    """Where `make podman` serves the Docker API of the rootless user."""
    if url := os.environ.get("FACTORY_PODMAN_SOCKET"):
        return url
    uid = os.getuid()
    if uid == 0:  # root talks to the unprivileged user's engine, never runs one of its own
        try:
            uid = pwd.getpwnam(os.environ.get("FACTORY_PODMAN_USER", "factory")).pw_uid
        except KeyError:
            return "unix:///run/user/0/podman/podman.sock"
    return f"unix:///run/user/{uid}/podman/podman.sock"


def refusal(info: dict) -> str | None:
    """What keeps the engine described by libpod's `info` from giving a sandbox its guarantees,
    in one line; None when nothing does."""
    host = info.get("host", {})
    if not host.get("security", {}).get("rootless"):
        return "the podman engine is not rootless; factory runs Podman only as an unprivileged user (make podman)"
    if os.environ.get("FACTORY_PODMAN_LIMITS") == UNENFORCED:
        return None
    if host.get("cgroupVersion") != "v2":
        return (f"cgroup {host.get('cgroupVersion')}: rootless Podman cannot set memory/pids/CPU limits here "
                f"(needs cgroup v2 with {', '.join(LIMITS)} delegated; FACTORY_PODMAN_LIMITS={UNENFORCED} runs without)")
    missing = [c for c in LIMITS if c not in (host.get("cgroupControllers") or [])]
    if missing:
        return (f"cgroup controller(s) {', '.join(missing)} not delegated to the podman user "
                f"(FACTORY_PODMAN_LIMITS={UNENFORCED} runs without)")
    return None


class PodmanBackend(DockerBackend):
    """`factory.protocols.SandboxBackend` on rootless Podman's Docker-compatible socket."""

    name = "podman"

    @functools.cached_property
    def url(self) -> str:  # type: ignore[override]
        return socket_url()

    def _engine(self) -> None:
        engine.connect(self.url)
        self._checked()

    @functools.cache  # noqa: B019 - one backend object per process, checked once
    def _checked(self) -> None:
        api = engine.client().api
        answer = api.get(f"{api.base_url}/v4.0.0/libpod/info", timeout=30)
        if answer.status_code != 200:
            raise SandboxError(f"{self.url} is not a Podman engine (libpod/info: HTTP {answer.status_code})")
        if why := refusal(answer.json()):
            raise SandboxError(f"podman: {why}")


BACKEND = PodmanBackend()
