#!/usr/bin/env bash
# Builds the image for users, fencelock:VERSION (and fencelock:latest), with the app baked in and no
# registry reached (see docs/containers.md#images and docs/operations.md):
#   1. the base: this machine's node binary and the libraries it needs, imported once by
#      scripts/build-image.sh (fencelock-node:dev, rebuilt only when node or its libraries change);
#   2. a build context: the compiled dist/src, proto/, production node_modules (pruned offline from the
#      installed ones), and /etc/passwd with a dedicated user;
#   3. `docker build` of deploy/docker/Dockerfile FROM the base (the classic builder: nothing is pulled).
# Then a smoke check: the image prints `--help` and loads the storage addon, with no network.
#   IMAGE=name:tag scripts/build-user-image.sh     another tag (default fencelock:<package.json version>)
#   BASE=name:tag scripts/build-user-image.sh      another base (default fencelock-node:dev)
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=$(node -p "require('./package.json').version")
IMAGE=${IMAGE:-fencelock:$VERSION}
BASE=${BASE:-fencelock-node:dev}
say() { echo "build-user-image: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

command -v docker >/dev/null 2>&1 || die "no docker CLI (run scripts/ensure-docker.sh first)"
docker info >/dev/null 2>&1 || die "the Docker engine does not answer (run scripts/ensure-docker.sh first)"
[ -d node_modules ] || die "no node_modules: run npm ci first"

npx tsc -p tsconfig.json
node scripts/copy-dashboard.cjs # the dashboard's static files, which tsc does not emit
IMAGE="$BASE" bash scripts/build-image.sh

CTX=$(mktemp -d /tmp/fencelock-user-image-XXXXXX)
trap 'rm -rf "$CTX"' EXIT
APP="$CTX/app"
mkdir -p "$APP/dist" "$CTX/etc" "$CTX/var/lib/fencelock"
cp -a dist/src "$APP/dist/src"
cp -a proto "$APP/proto"
cp package.json package-lock.json "$APP/"
cp -a node_modules "$APP/node_modules"
# Only what the app needs at run time: dev dependencies removed offline, no install scripts run.
(cd "$APP" && npm prune --omit=dev --offline --ignore-scripts --no-audit --no-fund >/dev/null 2>&1) \
  || die "npm prune --omit=dev failed in $APP"
printf 'root:x:0:0:root:/root:/bin/sh\nfencelock:x:10001:10001:fencelock:/var/lib/fencelock:/bin/false\n' >"$CTX/etc/passwd"
printf 'root:x:0:\nfencelock:x:10001:\n' >"$CTX/etc/group"

OLD_ID=$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)
# The classic builder takes FROM from the local images and never pulls one that is there.
DOCKER_BUILDKIT=0 docker build --quiet --network none \
  --build-arg "BASE=$BASE" \
  --label "org.opencontainers.image.title=fencelock" \
  --label "org.opencontainers.image.version=$VERSION" \
  --label "fencelock.node.version=$(node --version)" \
  -f deploy/docker/Dockerfile -t "$IMAGE" -t "${IMAGE%:*}:latest" "$CTX" >/dev/null

# Smoke check, with no network: the CLI runs, and the LevelDB addon loads for the dedicated user.
HELP=$(docker run --rm --network none "$IMAGE" --help) || die "$IMAGE --help failed"
grep -q '^  serve ' <<<"$HELP" || die "$IMAGE --help does not list serve"
docker run --rm --network none --entrypoint /usr/local/bin/node "$IMAGE" \
  -e "require('/opt/fencelock/node_modules/classic-level'); if (process.getuid() !== 10001) throw new Error('runs as uid ' + process.getuid())" \
  || die "$IMAGE cannot load classic-level as the fencelock user"

NEW_ID=$(docker image inspect -f '{{.Id}}' "$IMAGE")
if [ -n "$OLD_ID" ] && [ "$OLD_ID" != "$NEW_ID" ]; then docker rmi "$OLD_ID" >/dev/null 2>&1 || true; fi
SIZE=$(docker image inspect -f '{{.Size}}' "$IMAGE")
say "built $IMAGE (app $VERSION, node $(node --version), $(( SIZE / 1024 / 1024 )) MB) FROM $BASE in ${SECONDS} s"
