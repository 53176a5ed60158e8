#!/usr/bin/env bash
# build-lang-image.sh LANG [IMAGE]: a language's toolchain image, made without any registry: the
# python base image (scripts/build-base-image.sh) plus that language's Debian packages, installed
# by apt in a container and committed. The base layers are shared with every other factory image,
# so each language adds only its toolchain. Skipped when the image exists. FACTORY_ENGINE=podman
# builds into rootless Podman's store (scripts/engine.sh), from the base image in that store.
#
#   go    factory/go:1     golang-go (go test -json)
#   node  factory/node:1   nodejs + Debian's mocha (mocha --reporter json)
#   jest  factory/jest:1   nodejs + mocha + Debian's jest (jest --json): the node image's packages and jest
#   java  factory/java:1   openjdk-17-jdk-headless + junit5 (the console launcher writes JUnit XML)
#   rust  factory/rust:1   rustc + cargo (no crates: the repos have no dependencies)
set -euo pipefail
. "$(dirname "$0")/engine.sh"

lang=${1:?usage: build-lang-image.sh go|node|jest|java|rust [IMAGE]}
BASE="${FACTORY_BASE_IMAGE:-factory/python:3.11}"
fail() { echo "make lang-images: $*" >&2; exit 2; }

# ENV lines are `docker commit --change`s; CHECK proves the toolchain runs offline.
case "$lang" in
  go)
    PACKAGES="golang-go"
    # no C compiler in the image: cgo off; GOPROXY=off: go never asks the module proxy
    ENV=("ENV CGO_ENABLED=0" "ENV GOPROXY=off" "ENV GOTOOLCHAIN=local"
         "ENV GOCACHE=/tmp/go-cache" "ENV GOPATH=/tmp/go")
    CHECK="go version" ;;
  node)
    PACKAGES="nodejs mocha"
    ENV=()
    CHECK="node --version && mocha --version" ;;
  jest)
    PACKAGES="nodejs mocha jest"
    ENV=()
    CHECK="node --version && jest --version" ;;
  java)
    PACKAGES="openjdk-17-jdk-headless junit5"
    ENV=("ENV JUNIT_CONSOLE=/usr/share/java/junit-platform-console-standalone.jar")
    CHECK="javac -version && java -jar /usr/share/java/junit-platform-console-standalone.jar --list-engines" ;;
  rust)
    PACKAGES="rustc cargo"
    ENV=("ENV CARGO_HOME=/tmp/cargo" "ENV CARGO_NET_OFFLINE=true" "ENV CARGO_TERM_COLOR=never")
    CHECK="rustc --version && cargo --version" ;;
  *) fail "unknown language '$lang' (valid: go, node, jest, java, rust)" ;;
esac
IMAGE="${2:-factory/$lang:1}"

if engine image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "lang-images: $IMAGE already present"
  exit 0
fi
if [ "$FACTORY_ENGINE" = podman ] && command -v docker >/dev/null && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "lang-images: copying $IMAGE from Docker's store into rootless Podman's"
  docker save "$IMAGE" | engine load -q >/dev/null || fail "docker save | podman load of $IMAGE failed"
  engine run --rm --network none "$IMAGE" bash -c "$CHECK"
  exit 0
fi
engine image inspect "$BASE" >/dev/null 2>&1 || fail "base image $BASE is missing: run make images first"

# Docs, man pages and translations are dead weight in a sandbox: dpkg never unpacks them.
INSTALL="
set -e
printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-exclude=/usr/share/man/*' \
  'path-exclude=/usr/share/locale/*' 'path-exclude=/usr/share/info/*' > /etc/dpkg/dpkg.cfg.d/01-factory-nodoc
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
export DEBIAN_FRONTEND=noninteractive
mkdir -p /usr/share/man/man1   # openjdk's postinst wants it even when man pages are excluded
apt-get update -qq
apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null
apt-get clean
rm -rf /var/lib/apt/lists/* /usr/sbin/policy-rc.d /var/log/apt /var/log/dpkg.log /var/cache/debconf/*-old
"

# apt reaches the machine's Debian mirror through the host's network, as debootstrap did.
builder="factory-lang-build-$lang-$$"
trap 'engine rm -f "$builder" >/dev/null 2>&1 || true' EXIT
start=$(date +%s)
echo "lang-images: installing $PACKAGES into $IMAGE (from $BASE)"
engine run --name "$builder" --network host --label factory.build="$IMAGE" "$BASE" bash -c "$INSTALL" \
  || fail "apt-get install $PACKAGES failed"
changes=(--change 'CMD ["/bin/bash"]' --change 'LABEL factory.build=""' --change "LABEL factory.toolchain=$lang")
for env in "${ENV[@]}"; do changes+=(--change "$env"); done
engine commit "${changes[@]}" "$builder" "$IMAGE" >/dev/null
engine run --rm --network none "$IMAGE" bash -c "$CHECK"
echo "lang-images: $IMAGE built in $(( $(date +%s) - start ))s, $(engine image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%d MB", $1/1e6}')"
