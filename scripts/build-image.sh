#!/usr/bin/env bash
# Builds the local image fencelock-node:dev without any registry (see docs/containers.md#images):
# a root folder with this machine's node binary, the shared libraries ldd lists for it and for every glibc
# native addon under node_modules (classic-level and friends), busybox (a static /bin/sh, optional), then
# `tar | docker import`.
#
# The app itself is NOT in the image: the chaos tests bind-mount the built project read-only at /app
# (dist/, node_modules/, proto/), so a code change needs no rebuild.
#
# Rebuilt only when needed: the image carries a label with a fingerprint of everything that went into it
# (node binary, libraries, busybox, this script). Same fingerprint -> nothing to do.
#   FORCE=1 scripts/build-image.sh     rebuild anyway
#   IMAGE=name:tag scripts/build-image.sh
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${IMAGE:-fencelock-node:dev}
LABEL=fencelock.image.fingerprint
t0=$(date +%s%N)
say() { echo "build-image: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
elapsed() { echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms"; }

command -v docker >/dev/null 2>&1 || die "no docker CLI (run scripts/ensure-docker.sh first)"
docker info >/dev/null 2>&1 || die "the Docker engine does not answer (run scripts/ensure-docker.sh first)"

NODE_BIN=$(readlink -f "$(command -v node)")
[ -x "$NODE_BIN" ] || die "node binary not found"

# Libraries that `ldd FILE` resolves (absolute paths, the dynamic loader included). Prints nothing for a
# file ldd rejects (static, foreign architecture, musl); never fails, so `set -o pipefail` stays happy.
libs_of() {
  local out
  out=$(ldd "$1" 2>/dev/null) || return 0
  # A musl build resolves libc.musl-*.so as "not found" against glibc: not ours to load.
  if grep -q 'not found' <<<"$out"; then return 0; fi
  awk '/=> \//{print $3} /^[[:space:]]*\/[^ ]+ \(0x/{print $1}' <<<"$out"
}

ADDONS=()
while IFS= read -r -d '' f; do
  case "$f" in *musl*) continue ;; esac
  ADDONS+=("$f")
done < <(find node_modules -name '*.node' -type f -print0 2>/dev/null)

LIBS=$( { libs_of "$NODE_BIN"; for a in "${ADDONS[@]}"; do libs_of "$a"; done; } | sort -u)
[ -n "$LIBS" ] || die "ldd found no libraries for $NODE_BIN"

BUSYBOX=$(command -v busybox 2>/dev/null || true)
if [ -n "$BUSYBOX" ]; then BUSYBOX=$(readlink -f "$BUSYBOX"); fi
if [ -n "$BUSYBOX" ] && ldd "$BUSYBOX" >/dev/null 2>&1; then
  say "note: $BUSYBOX is not static (install busybox-static); image gets no /bin/sh"
  BUSYBOX=""
fi

# Fingerprint of every input: node, each library, busybox, this script.
# Contents only (not the path this script was called by): the same inputs give the same fingerprint.
FINGERPRINT=$( {
  sha256sum <"$NODE_BIN"
  sha256sum <"${BASH_SOURCE[0]}"
  for lib in $LIBS; do echo "$lib $(sha256sum <"$lib")"; done
  if [ -n "$BUSYBOX" ]; then sha256sum <"$BUSYBOX"; fi
} | sha256sum | cut -c1-32)

CURRENT=$(docker image inspect -f "{{index .Config.Labels \"$LABEL\"}}" "$IMAGE" 2>/dev/null || true)
if [ "${FORCE:-0}" != 1 ] && [ "$CURRENT" = "$FINGERPRINT" ]; then
  say "$IMAGE is up to date (node $(node --version), fingerprint $FINGERPRINT); checked in $(elapsed)"
  exit 0
fi

OLD_ID=$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)
ROOT=$(mktemp -d /tmp/fencelock-image-XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
mkdir -p "$ROOT/usr/local/bin" "$ROOT/app" "$ROOT/data" "$ROOT/config" "$ROOT/etc" "$ROOT/bin" "$ROOT/tmp"
chmod 1777 "$ROOT/tmp"
cp "$NODE_BIN" "$ROOT/usr/local/bin/node"
for lib in $LIBS; do
  # Keep the path ldd printed (the loader looks there), with the real file's content.
  mkdir -p "$ROOT$(dirname "$lib")"
  cp -L "$lib" "$ROOT$lib"
done
# Debian's merged /usr: /lib64 -> usr/lib64 on the host; the copies above already sit at the printed paths.
if [ -n "$BUSYBOX" ]; then
  cp "$BUSYBOX" "$ROOT/bin/busybox"
  for applet in $("$BUSYBOX" --list); do
    [ -e "$ROOT/bin/$applet" ] || ln -s busybox "$ROOT/bin/$applet"
  done
fi
echo 'root:x:0:0:root:/root:/bin/sh' >"$ROOT/etc/passwd"
echo 'root:x:0:' >"$ROOT/etc/group"

tar -C "$ROOT" -c . | docker import \
  --change "LABEL $LABEL=$FINGERPRINT" \
  --change "LABEL fencelock.node.version=$(node --version)" \
  --change 'ENV PATH=/usr/local/bin:/bin' \
  --change 'WORKDIR /app' \
  --change 'ENTRYPOINT ["/usr/local/bin/node"]' \
  - "$IMAGE" >/dev/null

# Smoke check: the image runs node and loads the level addon from the mounted project.
docker run --rm --network none -v "$PWD:/app:ro" "$IMAGE" \
  -e "require('classic-level'); process.stdout.write('ok ' + process.version)" >/dev/null \
  || die "the new image cannot run node with the project mounted at /app"

# The previous build is left untagged by the import: remove it (fails harmlessly while a container uses it).
NEW_ID=$(docker image inspect -f '{{.Id}}' "$IMAGE")
if [ -n "$OLD_ID" ] && [ "$OLD_ID" != "$NEW_ID" ]; then docker rmi "$OLD_ID" >/dev/null 2>&1 || true; fi

SIZE=$(docker image inspect -f '{{.Size}}' "$IMAGE")
say "built $IMAGE (node $(node --version), $(( SIZE / 1024 / 1024 )) MB, ${#ADDONS[@]} addons scanned) in $(elapsed)"
