#!/usr/bin/env bash
# Makes sure a Redis server (Debian's redis-server package) is installed, for the fencing tests (test/fencing),
# which run every fencing rule against a real Redis as well as PostgreSQL. Installs it when missing (needs root
# or passwordless sudo; quiet, non-interactive, idempotent). No server is started: the tests' global setup
# starts a temporary one of their own.
set -euo pipefail
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

say() { echo "ensure-redis: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

if command -v redis-server >/dev/null 2>&1; then
  say "Redis is installed ($(redis-server --version))"
  exit 0
fi

# shellcheck source=apt-install.sh
. "$(dirname "$0")/apt-install.sh"
t0=$(date +%s)
apt_install redis redis-server
command -v redis-server >/dev/null 2>&1 || die "no redis-server on PATH after installation"
say "installed $(redis-server --version) in $(( $(date +%s) - t0 )) s"
