#!/usr/bin/env bash
# Installs the official A2A JS SDK of both revisions, the interop suite's second SDK family, into
# tests/interop/js/node_modules from its lock file:
#   a2a-js-03  @a2a-js/sdk 0.3.14 (speaks A2A 0.3)
#   a2a-js-10  @a2a-js/sdk 1.3.0  (speaks A2A 1.0)
# with the peers their servers and gRPC transports need (express, @grpc/grpc-js,
# @bufbuild/protobuf). Node.js and npm come from Debian when missing. Idempotent: a tree installed
# from the same lock file is left as it is.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/tests/interop/js"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "installing nodejs and npm" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >/dev/null
fi
stamp="$dir/node_modules/.package-lock.stamp"
if [ -f "$stamp" ] && cmp -s "$dir/package-lock.json" "$stamp"; then
  exit 0
fi
echo "setting up $dir/node_modules" >&2
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
cp "$dir/package-lock.json" "$stamp"
