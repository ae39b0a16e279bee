# Sourced by the ensure-*.sh scripts: apt_install WHAT PACKAGE installs a Debian package quietly and
# non-interactively (needs root or passwordless sudo), logging to /tmp/ensure-WHAT-apt.log; dies on failure.
# The caller defines say() and die().
apt_install() {
  local what="$1" pkg="$2" log="/tmp/ensure-$1-apt.log"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo=(sudo -n); else
      die "$what is missing and this user is not root (nor has passwordless sudo) to install it: apt-get install $pkg"
    fi
  fi
  command -v apt-get >/dev/null 2>&1 || die "$what is missing and there is no apt-get to install it"
  say "installing $pkg (apt-get) ..."
  local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120)
  # The package's own service is not wanted (no systemd here; tests and benchmarks start their own daemons).
  "${apt[@]}" update -qq >"$log" 2>&1 || { cat "$log" >&2; die "apt-get update failed"; }
  "${apt[@]}" install -y -qq --no-install-recommends "$pkg" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; die "apt-get install $pkg failed"; }
  hash -r
}
