#!/usr/bin/env bash
# Makes sure ZooKeeper (Debian's zookeeper package: the server's jars, no daemon) and Java are installed, for
# `npm run bench` and its test, which compare fencelock with a local 3-server ZooKeeper ensemble. Installs it
# from Debian when missing (needs root or passwordless sudo; quiet, non-interactive, idempotent). Starts no
# daemon: the benchmark starts its own ensemble on free ports. A system ZooKeeper service (Debian's zookeeperd)
# is stopped and disabled, so that nothing but the benchmark's own servers runs ZooKeeper here.
set -euo pipefail
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

say() { echo "ensure-zookeeper: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

JAR=/usr/share/java/zookeeper.jar

# A system service would listen on 2181 for as long as the machine runs; the benchmark needs none of it.
stop_system_service() {
  if command -v systemctl >/dev/null 2>&1 && systemctl list-unit-files zookeeper.service 2>/dev/null | grep -q '^zookeeper\.service'; then
    systemctl disable --now zookeeper.service >/dev/null 2>&1 && say "stopped and disabled the system zookeeper.service" \
      || say "warning: could not stop/disable zookeeper.service"
  fi
  if [ -x /etc/init.d/zookeeper ]; then
    /etc/init.d/zookeeper stop >/dev/null 2>&1 && say "stopped /etc/init.d/zookeeper" || true
    command -v update-rc.d >/dev/null 2>&1 && update-rc.d zookeeper disable >/dev/null 2>&1 && say "disabled /etc/init.d/zookeeper" || true
  fi
  if command -v ss >/dev/null 2>&1 && ss -ltnH 'sport = :2181' 2>/dev/null | grep -q .; then
    say "warning: something still listens on port 2181 (not the benchmark's: it uses free ports)"
  else
    say "no system ZooKeeper is listening on 2181"
  fi
}

if [ -f "$JAR" ] && command -v java >/dev/null 2>&1; then
  say "zookeeper is installed ($(dpkg-query -W -f='${Version}' zookeeper 2>/dev/null || readlink -f "$JAR"))"
  stop_system_service
  exit 0
fi

# shellcheck source=apt-install.sh
. "$(dirname "$0")/apt-install.sh"
t0=$(date +%s)
apt_install zookeeper zookeeper
[ -f "$JAR" ] || die "$JAR not found after installing zookeeper"
command -v java >/dev/null 2>&1 || die "java not found on PATH after installing zookeeper"
say "installed zookeeper $(dpkg-query -W -f='${Version}' zookeeper 2>/dev/null) in $(( $(date +%s) - t0 )) s"
stop_system_service
