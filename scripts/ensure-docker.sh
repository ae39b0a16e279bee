#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine, for the container (chaos) tests.
#
#   1. `docker info` answers: done.
#   2. No `dockerd` (a docker CLI alone is not enough): install Debian's docker.io, iptables and
#      busybox-static (needs root or passwordless sudo; quiet, non-interactive, idempotent).
#   3. Start `dockerd` in the background (log: /tmp/dockerd.log), removing a stale pid file left by a dead
#      daemon, and wait up to 30 s for `docker info`.
# Exits non-zero with a clear message when no engine can be had. Safe to run again and again.
# See docs/containers.md#engine for why it is done this way (no systemd, no registry).
set -euo pipefail

# dockerd and iptables live in sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
LOG=/tmp/dockerd.log
PIDFILE=/var/run/docker.pid
WAIT_S=30

say() { echo "ensure-docker: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

# `timeout`: a hung daemon must not hang the test run.
engine_up() { timeout 10 docker info >/dev/null 2>&1; }

if [ "${ENSURE_DOCKER_REINSTALL:-0}" != 1 ] && command -v docker >/dev/null 2>&1 && engine_up; then
  say "Docker engine is running ($(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'))"
  exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    die "no Docker engine answers and this user is not root (nor has passwordless sudo) to install/start one"
  fi
fi

need_install=${ENSURE_DOCKER_REINSTALL:-0}   # 1: run the apt-get step even if everything is there
command -v dockerd >/dev/null 2>&1 || need_install=1
command -v docker >/dev/null 2>&1 || need_install=1
command -v iptables >/dev/null 2>&1 || need_install=1
if [ "$need_install" = 1 ]; then
  command -v apt-get >/dev/null 2>&1 || die "dockerd is missing and there is no apt-get to install it"
  PKGS=(docker.io iptables)
  # busybox-static (a static /bin/sh for the image, optional) conflicts with Debian's dynamic busybox.
  dpkg -s busybox >/dev/null 2>&1 || PKGS+=(busybox-static)
  say "installing ${PKGS[*]} (apt-get) ..."
  t0=$(date +%s)
  APT=("${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120)
  "${APT[@]}" update -qq >/tmp/ensure-docker-apt.log 2>&1 || { cat /tmp/ensure-docker-apt.log >&2; die "apt-get update failed"; }
  "${APT[@]}" install -y -qq --no-install-recommends "${PKGS[@]}" >>/tmp/ensure-docker-apt.log 2>&1 \
    || { tail -n 30 /tmp/ensure-docker-apt.log >&2; die "apt-get install ${PKGS[*]} failed"; }
  say "installed in $(( $(date +%s) - t0 )) s"
  hash -r
fi
command -v dockerd >/dev/null 2>&1 || die "dockerd not found on PATH after installation"

# True when PID is a live (not zombie) process whose command line contains NAME.
live_process() {
  local pid=$1 name=$2
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$name"
}

# A pid file whose process is gone (or a zombie) is removed: a stale /var/run/docker.pid makes a new dockerd
# exit at once ("pid file found"), and a stale containerd.pid makes it wait for a containerd that never answers.
clear_stale_pidfile() {
  local file=$1 name=$2 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file" 2>/dev/null || true)
  if live_process "$pid" "$name"; then return 1; fi
  say "removing stale $file (pid '${pid}' is not a running $name)"
  "${SUDO[@]}" rm -f "$file"
}

if ! engine_up; then
  DOCKERD_PID=""
  if clear_stale_pidfile "$PIDFILE" dockerd; then
    clear_stale_pidfile /var/run/docker/containerd/containerd.pid containerd || true
    say "starting dockerd (log: $LOG)"
    # setsid + nohup: the daemon outlives this script and the test run that called it.
    "${SUDO[@]}" setsid nohup dockerd >"$LOG" 2>&1 </dev/null &
    DOCKERD_PID=$!
  else
    say "dockerd (pid $(cat "$PIDFILE")) is running but not answering yet; waiting for it"
  fi
  deadline=$((SECONDS + WAIT_S))
  while ! engine_up; do
    if [ -n "$DOCKERD_PID" ] && ! live_process "$DOCKERD_PID" dockerd; then
      say "dockerd exited while starting"
      break
    fi
    [ "$SECONDS" -lt "$deadline" ] || break
    sleep 0.2
  done
fi

if ! engine_up; then
  say "last lines of $LOG:"
  tail -n 20 "$LOG" >&2 2>/dev/null || true
  die "no Docker engine answers 'docker info' (waited up to ${WAIT_S} s; full log: $LOG)"
fi
say "Docker engine is running ($(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'))"
