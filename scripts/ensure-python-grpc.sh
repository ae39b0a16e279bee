#!/usr/bin/env bash
# Makes sure Python 3 with gRPC (Debian's python3-grpcio) and the protoc plugin (python3-grpc-tools) are
# installed, for the second-language conformance client (test/contract/python), which generates its stubs from
# lock.proto at test time. Installs them when missing (needs root or passwordless sudo; quiet,
# non-interactive, idempotent).
set -euo pipefail
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

say() { echo "ensure-python-grpc: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

# Debian's interpreter, by path: a python3 earlier on PATH (pyenv, a venv) does not see Debian's packages.
py=/usr/bin/python3
has() { [ -x "$py" ] && "$py" -c "import $1" >/dev/null 2>&1; }

# shellcheck source=apt-install.sh
. "$(dirname "$0")/apt-install.sh"
t0=$(date +%s)
if ! has grpc; then
  apt_install python-grpc python3-grpcio
fi
if ! has grpc_tools.protoc; then
  apt_install python-grpc python3-grpc-tools
fi
has grpc || die "$py cannot import grpc after installation"
has grpc_tools.protoc || die "$py cannot import grpc_tools.protoc after installation"
say "$py: grpc $("$py" -c 'import grpc; print(grpc.__version__)') with grpc_tools ready in $(( $(date +%s) - t0 )) s"
