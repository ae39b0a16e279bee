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

# shellcheck source=apt-install.sh
. "$(dirname "$0")/apt-install.sh"
t0=$(date +%s)
apt_install etcd etcd-server
command -v etcd >/dev/null 2>&1 || die "etcd not found on PATH after installation"
say "installed $(etcd --version 2>/dev/null | head -n 1) in $(( $(date +%s) - t0 )) s"
