#!/usr/bin/env bash
# Make sure Debian's headless-capable browser is at /usr/bin/chromium, for the test that opens
# `factory report`'s page in it. As root on Debian, installs `chromium` (and a font, so the
# page's text renders) when it is missing; does nothing when it is there. Exit 2 with a
# message when it is missing and cannot be installed here.
set -euo pipefail

BROWSER=/usr/bin/chromium
fail() { echo "make browser: $*" >&2; exit 2; }

if [ -x "$BROWSER" ]; then
  echo "browser: $("$BROWSER" --version 2>/dev/null || echo "$BROWSER") present"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  fail "$BROWSER is missing and this is not root on Debian; install the chromium package and rerun"
fi

echo "browser: installing chromium from the configured Debian sources"
export DEBIAN_FRONTEND=noninteractive
# another apt-get (make docker in a parallel shell) may hold the dpkg lock: wait for it
apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
apt_get update -qq
apt_get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null \
  || fail "apt-get install chromium failed"
[ -x "$BROWSER" ] || fail "chromium installed but $BROWSER is not there"
echo "browser: $("$BROWSER" --version 2>/dev/null) installed"
