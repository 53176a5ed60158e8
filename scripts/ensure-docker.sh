#!/usr/bin/env bash
# Make sure a Docker engine answers. Uses DOCKER_HOST or the default socket when one
# answers; otherwise, as root on Debian, installs docker.io and starts dockerd.
# Exit 2 with a message when it can do neither.
set -euo pipefail

answers() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }
fail() { echo "make docker: $*" >&2; exit 2; }

if command -v docker >/dev/null 2>&1 && answers; then
  echo "docker: engine $(docker version --format '{{.Server.Version}}') answers"
  exit 0
fi
if [ -n "${DOCKER_HOST:-}" ]; then
  fail "DOCKER_HOST=$DOCKER_HOST does not answer; start that engine or unset DOCKER_HOST"
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  fail "no Docker engine answers and this is not root on Debian; start dockerd (or set DOCKER_HOST) and rerun"
fi

if ! command -v dockerd >/dev/null 2>&1; then
  echo "docker: installing docker.io from the configured Debian sources"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # policy-rc.d keeps the package from trying to start a service manager we may not have
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  apt-get install -y -qq --no-install-recommends docker.io tini iptables >/dev/null \
    || { rm -f /usr/sbin/policy-rc.d; fail "apt-get install docker.io failed"; }
  rm -f /usr/sbin/policy-rc.d
fi

if ! pgrep -x dockerd >/dev/null 2>&1; then
  echo "docker: starting dockerd (log: /var/log/factory-dockerd.log)"
  nohup dockerd >/var/log/factory-dockerd.log 2>&1 &
fi
for _ in $(seq 1 60); do
  if answers; then
    echo "docker: engine $(docker version --format '{{.Server.Version}}') answers"
    exit 0
  fi
  sleep 1
done
tail -n 20 /var/log/factory-dockerd.log >&2 || true
fail "dockerd did not answer within 60 s (see /var/log/factory-dockerd.log)"
