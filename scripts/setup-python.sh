#!/usr/bin/env bash
# Creates the two pinned Python environments the tests use as real A2A peers:
#   .venv/a2a-0.3  a2a-sdk 0.3.26 (speaks A2A 0.3)
#   .venv/a2a-1.0  a2a-sdk 1.3.0  (speaks A2A 1.0), plus pytest, which drives the interop suite
# Both packages are named `a2a`, so they cannot share one environment. Idempotent: an environment
# whose requirements file has not changed since it was built is left as it is.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
for rev in 0.3 1.0; do
  venv="$root/.venv/a2a-$rev"
  req="$root/tests/python/requirements-$rev.txt"
  stamp="$venv/.requirements"
  if [ -f "$stamp" ] && cmp -s "$req" "$stamp"; then
    continue
  fi
  echo "setting up $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
  cp "$req" "$stamp"
done
