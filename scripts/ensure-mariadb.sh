#!/usr/bin/env bash
# Makes sure a MariaDB server (Debian's mariadb-server package) is installed, for the fencing tests
# (test/fencing), which run every fencing rule against a real MariaDB as well as PostgreSQL. Installs it when
# missing (needs root or passwordless sudo; quiet, non-interactive, idempotent). No server is started: the
# tests' global setup initializes and starts a temporary one of their own.
set -euo pipefail
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

say() { echo "ensure-mariadb: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

installed() { command -v mariadbd >/dev/null 2>&1 && command -v mariadb-install-db >/dev/null 2>&1; }

if installed; then
  say "MariaDB is installed ($(mariadbd --version))"
  exit 0
fi

# shellcheck source=apt-install.sh
. "$(dirname "$0")/apt-install.sh"
t0=$(date +%s)
apt_install mariadb mariadb-server
installed || die "no mariadbd and mariadb-install-db on PATH after installation"
say "installed $(mariadbd --version) in $(( $(date +%s) - t0 )) s"
