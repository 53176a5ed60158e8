#!/usr/bin/env bash
# Build the base sandbox image without any registry: a Debian root filesystem made by
# debootstrap from this machine's configured Debian mirror, then `docker import`.
# Skipped when the image exists. Where a registry is reachable, scripts/python311.Dockerfile
# builds the same image with `docker build` (set FACTORY_BASE_FROM_REGISTRY=1).
# FACTORY_ENGINE=podman (scripts/engine.sh) builds it into rootless Podman's store instead:
# copied from Docker's store where Docker holds it (`docker save | podman load`), else the same
# debootstrap root filesystem, `podman import`ed.
set -euo pipefail
. "$(dirname "$0")/engine.sh"

IMAGE="${1:-factory/python:3.11}"
SUITE="${FACTORY_DEBIAN_SUITE:-bookworm}"   # bookworm ships Python 3.11
PACKAGES="python3,python3-pytest,python-is-python3,git,patch,bash,coreutils,ca-certificates,procps,passwd"
fail() { echo "make images: $*" >&2; exit 2; }

if engine image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "images: $IMAGE already present"
  exit 0
fi

if [ "$FACTORY_ENGINE" = podman ] && command -v docker >/dev/null && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "images: copying $IMAGE from Docker's store into rootless Podman's"
  docker save "$IMAGE" | engine load -q >/dev/null || fail "docker save | podman load of $IMAGE failed"
  engine run --rm --network none "$IMAGE" python -m pytest --version
  echo "images: $IMAGE loaded"
  exit 0
fi

if [ "${FACTORY_BASE_FROM_REGISTRY:-0}" = 1 ]; then
  exec engine build -t "$IMAGE" -f "$(dirname "$0")/python311.Dockerfile" "$(dirname "$0")"
fi

# The first Debian mirror this machine's apt is configured with (deb822 or one-line form).
mirror=$(
  { grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}';
    grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
      | sed -E 's/\[[^]]*\]//' | awk '{print $2}'; } \
  | grep -v -- '-security' | head -n 1
) || true
[ -n "$mirror" ] || fail "no Debian mirror found in /etc/apt/sources.list*; configure apt first"
[ "$(id -u)" = 0 ] || fail "debootstrap needs root"
if ! command -v debootstrap >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; } \
    || fail "cannot install debootstrap"
fi

rootfs=$(mktemp -d /var/tmp/factory-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
echo "images: debootstrap $SUITE into $rootfs (a few minutes)"
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$rootfs" "$mirror" >"$rootfs.log" 2>&1 \
  || { tail -n 30 "$rootfs.log" >&2; fail "debootstrap failed (log: $rootfs.log)"; }
rm -f "$rootfs.log"

# A non-root user for agents and tests; apt caches and docs are dead weight in every container.
chroot "$rootfs" useradd --create-home --uid 1000 --shell /bin/bash agent
chroot "$rootfs" git config --system --add safe.directory '*'
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
       "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/*

echo "images: importing $IMAGE"
tar -C "$rootfs" -c . | engine import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change 'CMD ["/bin/bash"]' \
  - "$IMAGE" >/dev/null
engine run --rm --network none "$IMAGE" python -m pytest --version
echo "images: $IMAGE built"
