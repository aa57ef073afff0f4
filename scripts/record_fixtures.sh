#!/usr/bin/env bash
# Regenerates every golden fixture under tests/fixtures from the two pinned Python SDKs.
# Each run of record_fixtures.py writes one revision's JSON-RPC files (and the shared manifest)
# from the same case table; each run of record_rest_fixtures.py then writes that revision's
# HTTP+JSON files under tests/fixtures/rest from the JSON-RPC ones (and its part of
# tests/fixtures/rest/manifest.json). See docs/fixtures.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup-python.sh"
for rev in 0.3 1.0; do
  "$root/.venv/a2a-$rev/bin/python" "$root/scripts/record_fixtures.py"
done
for rev in 0.3 1.0; do
  "$root/.venv/a2a-$rev/bin/python" "$root/scripts/record_rest_fixtures.py"
done
