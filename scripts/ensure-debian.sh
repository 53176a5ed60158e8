#!/usr/bin/env bash
# ensure-debian.sh TARGET PROGRAM PACKAGE...: make sure PROGRAM (an absolute path) is there; as
# root on Debian, install the PACKAGEs from the configured sources when it is missing. No service
# a package brings is started (policy-rc.d), so nothing listens on a port a test will want.
# Does nothing when PROGRAM is there; exit 2 with a message naming `make TARGET` otherwise.
set -euo pipefail

target=$1 program=$2; shift 2
fail() { echo "make $target: $*" >&2; exit 2; }

if [ -x "$program" ]; then
  echo "$target: $program present"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  fail "$program is missing and this is not root on Debian; install $* and rerun"
fi

echo "$target: installing $* from the configured Debian sources"
export DEBIAN_FRONTEND=noninteractive
# another apt-get (make docker in a parallel shell) may hold the dpkg lock: wait for it
apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
policy=/usr/sbin/policy-rc.d made_policy=
if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && made_policy=1; fi
status=0
{ apt_get update -qq && apt_get install -y -qq --no-install-recommends "$@" >/dev/null; } || status=$?
if [ -n "$made_policy" ]; then rm -f "$policy"; fi
[ "$status" = 0 ] || fail "apt-get install $* failed"
[ -x "$program" ] || fail "$* installed but $program is not there"
echo "$target: $program installed"
