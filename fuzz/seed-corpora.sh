#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from the golden fixtures in tests/fixtures.
#
#   decode_v03    every *.0.3.json document, compacted, plus the 0.3 fragments (params,
#                 result, error) on their own
#   decode_v10    the same for *.1.0.json
#   envelope      every fixture document of both revisions, compacted
#   sse_splitter  every response and event document framed as an SSE event, behind a prefix
#                 byte that makes the target cut it into chunks of 1..7 bytes, plus one
#                 stream of several events with CRLF line ends and comments
#
# Idempotent: files are named by content hash, and existing corpus entries are kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python3 - "$here/../tests/fixtures" "$here/corpus" <<'PY'
import hashlib
import json
import pathlib
import sys

fixtures, corpus = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])


def put(target, data):
    folder = corpus / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


stream = b""
for path in sorted(fixtures.glob("*/*.json")):
    if path.name == "manifest.json":
        continue
    document = json.loads(path.read_text())
    revision = "decode_v03" if path.name.endswith(".0.3.json") else "decode_v10"
    whole = compact(document)
    put(revision, whole)
    put("envelope", whole)
    if isinstance(document, dict):
        for member in ("params", "result", "error"):
            if member in document:
                put(revision, compact(document[member]))
        if "result" in document or "error" in document:
            event = b"data: " + whole + b"\n\n"
            # Prefix byte 7: seven chunk lengths follow (1..7), then the body.
            put("sse_splitter", bytes([7, 1, 2, 3, 4, 5, 6, 7]) + event)
            stream += b": keep-alive\r\nevent: message\r\ndata: " + whole + b"\r\n\r\n"
put("sse_splitter", bytes([3, 5, 13, 64]) + stream)
print(f"seeded {corpus}")
PY
