#!/usr/bin/env bash
# Runs the user image (scripts/build-user-image.sh) as a one-node cluster with no network: TLS on, bound to
# 0.0.0.0 inside the container, advertised as localhost. Checks that `fencelock status` run in the container
# reports the node as leader at its advertised address, and that `docker stop` ends it gracefully (exit 0).
#   IMAGE=name:tag scripts/check-user-image.sh     (default fencelock:<package.json version>)
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${IMAGE:-fencelock:$(node -p "require('./package.json').version")}
NAME=fencelock-image-check-$$
say() { echo "check-user-image: $*" >&2; }
die() { say "ERROR: $*"; docker logs "$NAME" 2>&1 | tail -n 20 >&2 || true; exit 1; }

DIR=$(mktemp -d /tmp/fencelock-image-check-XXXXXX)
trap 'docker rm -f -v "$NAME" >/dev/null 2>&1 || true; rm -rf "$DIR"' EXIT
node dist/src/cli/main.js certs init "$DIR/certs" --nodes fl1 --client ops >/dev/null
cat >"$DIR/node.json" <<'JSON'
{
  "id": "fl1",
  "clusterId": "image-check",
  "listen": "0.0.0.0:7001",
  "peerListen": "0.0.0.0:7101",
  "members": { "fl1": { "client": "localhost:7001", "peer": "localhost:7101" } },
  "tls": { "ca": "certs/ca.pem", "cert": "certs/fl1.pem", "key": "certs/fl1-key.pem" },
  "dataDir": "/var/lib/fencelock",
  "auth": { "enabled": false }
}
JSON
# The node runs as uid 10001 in the image: the mounted config and keys must be readable by it.
chmod 0755 "$DIR"
chown -R 10001:10001 "$DIR" 2>/dev/null || chmod -R a+rX "$DIR"

docker run -d --name "$NAME" --network none -v "$DIR:/etc/fencelock:ro" "$IMAGE" >/dev/null
FL=(docker exec "$NAME" /usr/local/bin/node /opt/fencelock/dist/src/cli/main.js --endpoints localhost:7001
  --cacert /etc/fencelock/certs/ca.pem --cert /etc/fencelock/certs/client.pem --key /etc/fencelock/certs/client-key.pem)
for _ in $(seq 1 50); do
  if OUT=$("${FL[@]}" status 2>/dev/null) && grep -q '^fl1 *localhost:7001 *leader' <<<"$OUT"; then break; fi
  OUT=""
  sleep 0.2
done
[ -n "$OUT" ] || die "the node in $IMAGE did not become leader at localhost:7001 within 10 s"
say "status: $(tail -n 1 <<<"$OUT")"
docker stop -t 20 "$NAME" >/dev/null
CODE=$(docker inspect -f '{{.State.ExitCode}}' "$NAME")
[ "$CODE" = 0 ] || die "docker stop: the node exited $CODE, not 0"
docker logs "$NAME" 2>&1 | grep -q '"msg":"fencelock node stopped"' || die "no graceful stop in the log"
say "ok: $IMAGE serves TLS on 0.0.0.0, reports its advertised address, stops gracefully on SIGTERM"
