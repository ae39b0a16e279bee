#!/usr/bin/env bash
# Makes sure etcd 3.4 (Debian's etcd-server) is installed, for `npm run bench` and its test, which compare
# fencelock with a local 3-member etcd cluster. Installs it from Debian when missing (needs root or
# passwordless sudo; quiet, non-interactive, idempotent). No daemon is started: the benchmark starts its own.
set -euo pipefail
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

say() { echo "ensure-etcd: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

if command -v etcd >/dev/null 2>&1; then
  say "etcd is installed ($(etcd --version 2>/dev/null | head -n 1))"
  exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    die "etcd is missing and this user is not root (nor has passwordless sudo) to install it: apt-get install etcd-server"
  fi
fi
command -v apt-get >/dev/null 2>&1 || die "etcd is missing and there is no apt-get to install it"
say "installing etcd-server (apt-get) ..."
t0=$(date +%s)
APT=("${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120)
# The package's own service is not wanted (no systemd here, and the benchmark runs its own members).
"${APT[@]}" update -qq >/tmp/ensure-etcd-apt.log 2>&1 || { cat /tmp/ensure-etcd-apt.log >&2; die "apt-get update failed"; }
"${APT[@]}" install -y -qq --no-install-recommends etcd-server >>/tmp/ensure-etcd-apt.log 2>&1 \
  || { tail -n 30 /tmp/ensure-etcd-apt.log >&2; die "apt-get install etcd-server failed"; }
hash -r
command -v etcd >/dev/null 2>&1 || die "etcd not found on PATH after installation"
say "installed $(etcd --version 2>/dev/null | head -n 1) in $(( $(date +%s) - t0 )) s"
