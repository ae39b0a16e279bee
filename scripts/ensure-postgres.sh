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

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    die "PostgreSQL is missing and this user is not root (nor has passwordless sudo) to install it: apt-get install postgresql"
  fi
fi
command -v apt-get >/dev/null 2>&1 || die "PostgreSQL is missing and there is no apt-get to install it"
say "installing postgresql (apt-get) ..."
t0=$(date +%s)
APT=("${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120)
"${APT[@]}" update -qq >/tmp/ensure-postgres-apt.log 2>&1 || { cat /tmp/ensure-postgres-apt.log >&2; die "apt-get update failed"; }
# The package's own cluster and service are not used (no systemd here; the tests start their own server).
"${APT[@]}" install -y -qq --no-install-recommends postgresql >>/tmp/ensure-postgres-apt.log 2>&1 \
  || { tail -n 30 /tmp/ensure-postgres-apt.log >&2; die "apt-get install postgresql failed"; }
[ -n "$(pg_bin)" ] || die "no /usr/lib/postgresql/*/bin after installation"
say "installed $("$(pg_bin)/postgres" --version) in $(( $(date +%s) - t0 )) s"
