#!/usr/bin/env bash
# Make sure rootless Podman answers on a Docker-compatible socket, run by an unprivileged user.
#
# As root on Debian: installs Debian's podman and what rootless needs (newuidmap from uidmap,
# slirp4netns, fuse-overlayfs, catatonit for --init), creates the user FACTORY_PODMAN_USER
# (default `factory`) with /etc/subuid and /etc/subgid ranges, gives it a runtime dir, and starts
# `podman system service` as that user on /run/user/<uid>/podman/podman.sock. As that user
# (or anyone else) it only checks that the socket answers.
#
# Then it checks what the sandbox needs of the kernel, and where the kernel refuses, prints ONE
# line naming what is missing and exits 2. It never runs Podman as root.
# On success the last line is the socket to use: `podman: socket unix:///run/user/<uid>/...`.
set -euo pipefail

USER_NAME="${FACTORY_PODMAN_USER:-factory}"
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "make podman: $*" >&2; exit 2; }

# --- what the kernel must allow, before anything is installed or started
max_userns=$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)
[ "$max_userns" -gt 0 ] || fail "user namespaces are off (user.max_user_namespaces=0); set it above 0"
if [ -r /proc/sys/kernel/unprivileged_userns_clone ] && [ "$(cat /proc/sys/kernel/unprivileged_userns_clone)" != 1 ]; then
  fail "unprivileged user namespaces are off (kernel.unprivileged_userns_clone=0); set it to 1"
fi

if [ "$(id -u)" = 0 ]; then
  bash "$here/ensure-debian.sh" podman /usr/bin/podman podman conmon catatonit containernetworking-plugins >/dev/null
  bash "$here/ensure-debian.sh" podman /usr/bin/newuidmap uidmap >/dev/null
  bash "$here/ensure-debian.sh" podman /usr/bin/slirp4netns slirp4netns >/dev/null
  bash "$here/ensure-debian.sh" podman /usr/bin/fuse-overlayfs fuse-overlayfs >/dev/null
  # crun refuses a hybrid cgroup layout (v1 controllers plus a v2 mount); runc runs on every
  # layout, and Debian's docker.io brings it already
  bash "$here/ensure-debian.sh" podman /usr/sbin/runc runc >/dev/null
  if ! id "$USER_NAME" >/dev/null 2>&1; then
    useradd --create-home --shell /bin/bash "$USER_NAME"
    echo "podman: created user $USER_NAME"
  fi
  grep -q "^$USER_NAME:" /etc/subuid 2>/dev/null || usermod --add-subuids 100000-165535 "$USER_NAME"
  grep -q "^$USER_NAME:" /etc/subgid 2>/dev/null || usermod --add-subgids 100000-165535 "$USER_NAME"
else
  USER_NAME=$(id -un)
fi

uid=$(id -u "$USER_NAME") || fail "no user $USER_NAME; run make podman as root once"
home=$(getent passwd "$USER_NAME" | cut -d: -f6)
run_dir=/run/user/$uid
sock=$run_dir/podman/podman.sock

# --- what rootless needs of the host, checked for the user that runs it
command -v podman >/dev/null 2>&1 || fail "podman is not installed; run make podman as root"
[ -u /usr/bin/newuidmap ] && [ -u /usr/bin/newgidmap ] || fail "no setuid newuidmap/newgidmap (Debian's uidmap package)"
grep -q "^$USER_NAME:" /etc/subuid || fail "no subordinate uids for $USER_NAME in /etc/subuid"
grep -q "^$USER_NAME:" /etc/subgid || fail "no subordinate gids for $USER_NAME in /etc/subgid"

as_user() {
  if [ "$(id -u)" = "$uid" ]; then env XDG_RUNTIME_DIR="$run_dir" "$@"
  else runuser -u "$USER_NAME" -- env XDG_RUNTIME_DIR="$run_dir" HOME="$home" "$@"; fi
}

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$run_dir" && chown "$USER_NAME:" "$run_dir" && chmod 700 "$run_dir"
  # No systemd here: cgroupfs, events in a file; native overlay (kernel >= 5.13) rather than
  # vfs, which copies the whole image for every container
  conf=$home/.config/containers
  as_user mkdir -p "$conf"
  [ -e "$conf/containers.conf" ] || as_user tee "$conf/containers.conf" >/dev/null <<'EOF'
# written by factory's scripts/ensure-podman.sh
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
EOF
  [ -e "$conf/storage.conf" ] || as_user tee "$conf/storage.conf" >/dev/null <<'EOF'
# written by factory's scripts/ensure-podman.sh
[storage]
driver = "overlay"
EOF
fi

answers() { as_user podman --url "unix://$sock" version --format '{{.Server.Version}}' >/dev/null 2>&1; }
if ! answers; then
  [ -d "$run_dir" ] || fail "$run_dir is missing; run make podman as root once"
  log=$run_dir/podman-service.log
  echo "podman: starting podman system service as $USER_NAME (log: $log)"
  as_user mkdir -p "$run_dir/podman"
  # --time=0: the service never exits when idle; setsid: it outlives this shell
  as_user setsid nohup podman system service --time=0 "unix://$sock" >"$log" 2>&1 </dev/null &
  for _ in $(seq 1 30); do answers && break; sleep 1; done
  answers || { tail -n 20 "$log" >&2; fail "podman system service did not answer on $sock within 30 s"; }
fi

# --- rootless, and the limits every sandbox is given (memory, pids, CPU): cgroup v2 with those
# controllers delegated to the user; on cgroup v1 rootless Podman drops every limit with a warning
info=$(as_user podman info --format '{{.Host.Security.Rootless}}|{{.Host.CgroupsVersion}}|{{.Host.CgroupControllers}}|{{.Store.GraphDriverName}}') \
  || fail "podman info fails as $USER_NAME"
IFS='|' read -r rootless cgroups controllers driver <<<"$info"
echo "podman: $(as_user podman version --format '{{.Client.Version}}') rootless=$rootless cgroup=$cgroups controllers=$controllers storage=$driver"
[ "$rootless" = true ] || fail "podman as $USER_NAME is not rootless"
if [ "$cgroups" != v2 ]; then
  fail "cgroup $cgroups: rootless Podman cannot set memory/pids/CPU limits (needs cgroup v2 with memory, pids and cpu delegated to $USER_NAME)"
fi
for c in memory pids cpu; do
  case " ${controllers//[\[\]]/} " in *" $c "*) ;; *) fail "cgroup controller $c is not delegated to $USER_NAME (delegated: ${controllers//[\[\]]/})" ;; esac
done
echo "podman: socket unix://$sock"
