#!/usr/bin/env bash
# The whole test suite: builds (integration tests run the compiled node), then runs every vitest project.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc -p tsconfig.json
npx vitest run "$@"
