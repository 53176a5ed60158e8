# Sourced by the image scripts: `engine ARGS...` runs the container engine they build for.
#   FACTORY_ENGINE=docker (default)  the docker CLI, against DOCKER_HOST or the default socket
#   FACTORY_ENGINE=podman            rootless podman as FACTORY_PODMAN_USER (default `factory`,
#                                    made by `make podman`); never podman as root
# Images stored by one engine are not seen by the other: each has its own store.
FACTORY_ENGINE="${FACTORY_ENGINE:-docker}"
case "$FACTORY_ENGINE" in
  docker)
    engine() { docker "$@"; } ;;
  podman)
    _podman_user="${FACTORY_PODMAN_USER:-factory}"
    if [ "$(id -u)" = 0 ]; then
      _podman_uid=$(id -u "$_podman_user" 2>/dev/null) \
        || { echo "no user $_podman_user for rootless podman: run make podman" >&2; exit 2; }
      engine() {
        runuser -u "$_podman_user" -- env XDG_RUNTIME_DIR="/run/user/$_podman_uid" \
          HOME="$(getent passwd "$_podman_user" | cut -d: -f6)" podman "$@"
      }
    else
      engine() { podman "$@"; }
    fi ;;
  *) echo "FACTORY_ENGINE=$FACTORY_ENGINE: valid are docker, podman" >&2; exit 2 ;;
esac
