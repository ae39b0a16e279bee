#!/usr/bin/env bash
# Makes sure a PostgreSQL server (Debian's postgresql package) is installed, for the fencing tests
# (test/fencing), which run every rule against a real server as well as PGlite. Installs it when missing (needs
# root or passwordless sudo; quiet, non-interactive, idempotent). No cluster is started: the tests' global
# setup initdb's and starts a temporary one of their own.
set -euo pipefail
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

say() { echo "ensure-postgres: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

if [ -n "$(pg_bin)" ] && [ -x "$(pg_bin)/postgres" ] && [ -x "$(pg_bin)/initdb" ]; then
  say "PostgreSQL is installed ($("$(pg_bin)/postgres" --version))"
  exit 0
fi

# shellcheck source=apt-install.sh
. "$(dirname "$0")/apt-install.sh"
t0=$(date +%s)
apt_install postgres postgresql
[ -n "$(pg_bin)" ] || die "no /usr/lib/postgresql/*/bin after installation"
say "installed $("$(pg_bin)/postgres" --version) in $(( $(date +%s) - t0 )) s"
