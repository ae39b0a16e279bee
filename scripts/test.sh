#!/usr/bin/env bash
# The whole test suite: builds (integration tests run the compiled node), then runs every vitest project.
# What it does to the machine is said up front (README "## Testing"); it stays what CI needs.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "npm test: this changes the machine: installs docker.io (with iptables, busybox-static), etcd-server, zookeeper, postgresql, mariadb-server, redis-server, python3-grpcio, python3-grpc-tools and chromium with apt-get when missing (root or sudo), starts dockerd and leaves it running, and builds the ~100 MB image fencelock-node:dev (Ctrl-C now to stop)" >&2
npm run --silent build
npx vitest run "$@"
