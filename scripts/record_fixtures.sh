#!/usr/bin/env bash
# Regenerates every golden fixture under tests/fixtures from the two pinned Python SDKs.
# Each run of record_fixtures.py writes one revision's files (and the shared manifest) from the
# same case table; see docs/fixtures.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup-python.sh"
for rev in 0.3 1.0; do
  "$root/.venv/a2a-$rev/bin/python" "$root/scripts/record_fixtures.py"
done
