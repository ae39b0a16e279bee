#!/usr/bin/env bash
# Makes sure a Chromium browser (Debian's chromium package) is installed, for the dashboard's browser tests
# (test/browser), which drive it headless with puppeteer-core. Installs it when missing (needs root or
# passwordless sudo; quiet, non-interactive, idempotent). puppeteer-core downloads no browser of its own: the
# tests launch this one (/usr/bin/chromium).
set -euo pipefail
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

say() { echo "ensure-chromium: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

if command -v chromium >/dev/null 2>&1; then
  say "Chromium is installed ($(chromium --version 2>/dev/null || echo 'version unknown'))"
  exit 0
fi

# shellcheck source=apt-install.sh
. "$(dirname "$0")/apt-install.sh"
t0=$(date +%s)
apt_install chromium chromium
command -v chromium >/dev/null 2>&1 || die "no chromium on PATH after installation"
say "installed $(chromium --version 2>/dev/null) in $(( $(date +%s) - t0 )) s"
